package io.strata.worker;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.master.MasterKeys;
import io.strata.master.MasterProcess;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.BlockState;
import io.strata.master.block.WorkerState;
import io.strata.master.file.FileSystemMaster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A real master ({@link MasterProcess}) in this JVM on 127.0.0.1, a free port, its journal and root under file
 * system under a test's dir, for a worker's master sync to register and heartbeat with; and what the tests read of
 * its state. For tests with one worker.
 */
final class InProcessMaster implements AutoCloseable {
  private final MasterProcess process;
  private final Path ufs;

  InProcessMaster(Path home, Clock clock) throws IOException {
    ufs = Files.createDirectories(home.resolve("ufs"));
    process = new MasterProcess(StrataConf.of(Map.of(
        CommonKeys.HOME.name(), home.toString(),
        MasterKeys.JOURNAL_DIR.name(), "journal",
        MasterKeys.ROOT_UFS.name(), ufs.toString(),
        MasterKeys.BIND_HOST.name(), "127.0.0.1",
        CommonKeys.MASTER_HOSTNAME.name(), "127.0.0.1",
        CommonKeys.MASTER_RPC_PORT.name(), "0",
        MasterKeys.WEB_PORT.name(), "0")), clock).start();
  }

  /** Where a {@link io.strata.common.master.MasterConnection} finds this master. */
  StrataConf clientConf() {
    return StrataConf.of(Map.of(CommonKeys.MASTER_HOSTNAME.name(), "127.0.0.1",
        CommonKeys.MASTER_RPC_PORT.name(), Integer.toString(process.rpcPort())));
  }

  FileSystemMaster fs() {
    return process.fileSystemMaster();
  }

  private BlockMaster blocks() {
    return fs().blockMaster();
  }

  /**
   * A file of {@code length} bytes (at most one block) put in the root under file system and loaded by a look-up: a
   * complete, persisted file, whose block a worker caches. Returns the id of that block.
   */
  long persistedBlock(String name, int length) throws IOException, StrataException {
    Files.write(ufs.resolve(name), new byte[length]);
    return BlockId.of(fs().getStatus("/" + name).id(), 0);
  }

  /** The one live worker (registered, not lost). */
  private WorkerState worker() {
    List<WorkerState> live = blocks().liveWorkers();
    if (live.size() != 1) {
      throw new AssertionError("One live worker expected, the master has " + live);
    }
    return live.get(0);
  }

  /** Which of {@code blockIds} the master lists on a live worker, and in which tier. */
  Map<Long, String> listed(long... blockIds) {
    Map<Long, String> out = new HashMap<>();
    for (long id : blockIds) {
      BlockState b = blocks().getBlock(id);
      if (b != null) {
        for (BlockState.Location l : b.locations()) {
          out.put(id, l.tier());
        }
      }
    }
    return out;
  }

  /** The blocks the master tells the worker to remove, in every heartbeat reply until one reports them removed. */
  Set<Long> toRemove() {
    return blocks().removalsOf(worker().id());
  }

  /** When the master last heard from the worker (its clock). */
  long lastHeartbeatMs() {
    return worker().lastHeartbeatMs();
  }

  @Override
  public void close() {
    process.close();
  }
}
