package io.strata.worker;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.common.master.MasterConnection;
import io.strata.common.net.WorkerAddress;
import io.strata.master.MasterKeys;
import io.strata.master.MasterProcess;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.BlockState;
import io.strata.master.block.WorkerState;
import io.strata.master.file.FileSystemMaster;
import io.strata.worker.store.StoreEvents;
import io.strata.worker.store.TieredBlockStore;
import io.strata.worker.ufs.MasterClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * A real master ({@link MasterProcess}) in this JVM on 127.0.0.1, a free port, its journal and root under file
 * system under a test's dir, for a worker's master sync to register and heartbeat with; and what the tests read of
 * its state. For tests with one worker (one registration at a time: see {@link #register}).
 */
public final class InProcessMaster implements AutoCloseable {
  private final MasterProcess process;
  private final Path ufs;

  public InProcessMaster(Path home, Clock clock) throws IOException {
    this(home, clock, Map.of());
  }

  /** With {@code conf} (property names to values) on top of the settings above. */
  public InProcessMaster(Path home, Clock clock, Map<String, String> conf) throws IOException {
    ufs = Files.createDirectories(home.resolve("ufs"));
    Map<String, String> all = new HashMap<>(Map.of(
        CommonKeys.HOME.name(), home.toString(),
        MasterKeys.JOURNAL_DIR.name(), "journal",
        MasterKeys.ROOT_UFS.name(), ufs.toString(),
        MasterKeys.BIND_HOST.name(), "127.0.0.1",
        CommonKeys.MASTER_HOSTNAME.name(), "127.0.0.1",
        CommonKeys.MASTER_RPC_PORT.name(), "0",
        MasterKeys.WEB_PORT.name(), "0"));
    all.putAll(conf);
    process = new MasterProcess(StrataConf.of(all), clock).start();
  }

  /** Where a {@link io.strata.common.master.MasterConnection} finds this master. */
  StrataConf clientConf() {
    return StrataConf.of(Map.of(CommonKeys.MASTER_HOSTNAME.name(), "127.0.0.1",
        CommonKeys.MASTER_RPC_PORT.name(), Integer.toString(process.rpcPort())));
  }

  public FileSystemMaster fs() {
    return process.fileSystemMaster();
  }

  /** The root under file system's dir: a file written here is a persisted file of the same path in Strata. */
  public Path ufs() {
    return ufs;
  }

  private BlockMaster blocks() {
    return fs().blockMaster();
  }

  /**
   * A file of {@code length} bytes (at most one block) put in the root under file system and loaded by a look-up: a
   * complete, persisted file, whose block a worker caches. Returns the id of that block.
   */
  long persistedBlock(String name, int length) throws IOException, StrataException {
    return BlockId.of(persistedFile(name, new byte[length]), 0);
  }

  /**
   * {@code content} written to {@code name} in the root under file system and loaded by a look-up: a complete,
   * persisted file (in blocks of {@link MasterKeys#UFS_BLOCK_SIZE}). Returns its id.
   */
  public long persistedFile(String name, byte[] content) throws IOException, StrataException {
    Path f = ufs.resolve(name);
    Files.createDirectories(f.getParent());
    Files.write(f, content);
    return fs().getStatus("/" + name).id();
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
  public Map<Long, String> listed(long... blockIds) {
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

  /**
   * A worker's master sync (the worker's {@link MasterClient}) registered with this master, at 127.0.0.1:1 (nothing
   * listens there), over the store {@code store} makes with the sync as the store's events. A later registration takes
   * the place of this one (the master drops a worker's old registration when its address registers again).
   */
  public Worker register(Function<StoreEvents, TieredBlockStore> store) {
    MasterConnection connection = new MasterConnection(clientConf());
    MasterSync sync = new MasterSync(connection, new WorkerAddress("127.0.0.1", 1), 10_000, Clock.systemUTC(),
        () -> { }, "", 4 << 20);
    TieredBlockStore s = store.apply(sync);
    sync.attach(s, null);
    sync.tick();
    if (!sync.isRegistered()) {
      sync.close();
      connection.close();
      throw new AssertionError("The worker did not register with the master");
    }
    return new Worker(connection, sync, s);
  }

  /** A registered worker's master sync and store (no RPC server of its own). */
  public static final class Worker implements AutoCloseable {
    private final MasterConnection connection;
    private final MasterSync sync;
    private final TieredBlockStore store;

    private Worker(MasterConnection connection, MasterSync sync, TieredBlockStore store) {
      this.connection = connection;
      this.sync = sync;
      this.store = store;
    }

    /** What the worker's UFS and caching code asks the master through. */
    public MasterClient client() {
      return sync;
    }

    public TieredBlockStore store() {
      return store;
    }

    /** Block commits sent to the master so far, taken or refused. */
    public long commitsSent() {
      return sync.batchCounts()[1];
    }

    @Override
    public void close() {
      sync.close();
      connection.close();
    }
  }

  @Override
  public void close() {
    process.close();
  }
}
