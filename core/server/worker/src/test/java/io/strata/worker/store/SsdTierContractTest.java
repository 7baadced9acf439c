package io.strata.worker.store;

import java.nio.file.Path;
import java.util.List;

/** The block store contract on a single SSD tier of two dirs. */
class SsdTierContractTest extends BlockStoreContractTest {
  private static final long QUOTA = 16 * 1024;

  @Override
  protected TieredBlockStore newStore(Path base, StoreEvents events) {
    return StoreFixture.builder().tier("SSD", QUOTA, base.resolve("ssd0"), base.resolve("ssd1")).events(events)
        .build();
  }

  @Override
  protected List<Path> dirRoots(Path base) {
    return List.of(base.resolve("ssd0"), base.resolve("ssd1"));
  }

  @Override
  protected String expectedTier() {
    return "SSD";
  }

  @Override
  protected long tierCapacity() {
    return 2 * QUOTA;
  }
}
