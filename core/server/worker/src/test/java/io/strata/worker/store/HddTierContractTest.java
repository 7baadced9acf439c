package io.strata.worker.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.worker.store.BlockStore.BlockMeta;
import io.strata.worker.store.BlockStore.DirReport;
import java.nio.file.Path;
import java.util.List;

/**
 * The block store contract on the HDD tier of a three-tier store. MEM and SSD are there but their dirs
 * are smaller than any block the suite writes, so every write and every eviction happens in HDD, the
 * last tier: the suite checks the bottom of a real tier stack, not a lone tier.
 */
class HddTierContractTest extends BlockStoreContractTest {
  private static final long QUOTA = 16 * 1024;
  private static final long TINY = MIN_BLOCK / 2;

  @Override
  protected TieredBlockStore newStore(Path base, StoreEvents events) {
    return StoreFixture.builder()
        .tier("MEM", TINY, base.resolve("mem"))
        .tier("SSD", TINY, base.resolve("ssd"))
        .tier("HDD", QUOTA, base.resolve("hdd0"), base.resolve("hdd1"))
        .events(events)
        .build();
  }

  @Override
  protected List<Path> dirRoots(Path base) {
    return List.of(base.resolve("mem"), base.resolve("ssd"), base.resolve("hdd0"), base.resolve("hdd1"));
  }

  @Override
  protected String expectedTier() {
    return "HDD";
  }

  @Override
  protected long tierCapacity() {
    return 2 * QUOTA;
  }

  @Override
  protected void assertPlacedAsExpected(TieredBlockStore s, BlockMeta meta) {
    super.assertPlacedAsExpected(s, meta);
    assertThat(s.dirOf(meta.blockId()).tierOrdinal).isEqualTo(2);
    for (DirReport r : s.dirReports()) {
      if (r.tierOrdinal() < 2) {
        assertThat(r.usedBytes()).as("%s %s holds nothing", r.tier(), r.path()).isZero();
      }
    }
  }
}
