package io.strata.worker.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;

/**
 * The block store contract on a single MEM tier of two dirs, on tmpfs ({@code /dev/shm}) where the
 * machine has it, as a worker's MEM tier is; elsewhere under a temp dir.
 */
class MemTierContractTest extends BlockStoreContractTest {
  private static final long QUOTA = 16 * 1024;
  private static final Path SHM = Path.of("/dev/shm");

  /** Our own subdir of /dev/shm, deleted after each test; null when on a temp dir. */
  private Path shmDir;

  @Override
  protected Path baseDir(Path tempDir) throws IOException {
    if (Files.isDirectory(SHM) && Files.isWritable(SHM)) {
      shmDir = Files.createTempDirectory(SHM, "strata-mem-contract-");
      return shmDir;
    }
    return tempDir;
  }

  @AfterEach
  void deleteShmDir() throws IOException {
    if (shmDir != null) {
      StoreFixture.deleteTree(shmDir);
    }
  }

  @Override
  protected TieredBlockStore newStore(Path base, StoreEvents events) {
    return StoreFixture.builder().tier("MEM", QUOTA, base.resolve("mem0"), base.resolve("mem1")).events(events)
        .build();
  }

  @Override
  protected List<Path> dirRoots(Path base) {
    return List.of(base.resolve("mem0"), base.resolve("mem1"));
  }

  @Override
  protected String expectedTier() {
    return "MEM";
  }

  @Override
  protected long tierCapacity() {
    return 2 * QUOTA;
  }
}
