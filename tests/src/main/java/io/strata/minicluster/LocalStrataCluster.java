package io.strata.minicluster;

import io.strata.client.FileSystem;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.master.MasterKeys;
import io.strata.master.MasterProcess;
import io.strata.worker.WorkerKeys;
import io.strata.worker.WorkerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A master and N workers in this JVM, on loopback, each worker with its own port and storage dir under
 * one base dir. Built by {@link #builder()}; tests share one per class. Used by the tests and by
 * {@code bin/strata-start.sh local}.
 *
 * <p>Not thread-safe for start/stop/restart; the processes it runs are.
 */
public final class LocalStrataCluster implements AutoCloseable {
  private final Builder spec;
  private final Path baseDir;
  private final int masterPort;
  private StrataConf baseConf;
  private MasterProcess master;
  private final List<WorkerProcess> workers = new ArrayList<>();
  private final List<StrataConf> workerConfs = new ArrayList<>();
  private final List<FileSystem> clients = new ArrayList<>();

  private LocalStrataCluster(Builder spec) throws IOException {
    this.spec = spec;
    this.baseDir = spec.baseDir != null ? spec.baseDir
        : Files.createTempDirectory(Path.of(spec.tmpRoot), "strata-minicluster-");
    this.masterPort = spec.masterPort != 0 ? spec.masterPort : FreePorts.loopback();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Builds a cluster description; {@link #start()} runs it. */
  public static final class Builder {
    private int workers = 1;
    private Path baseDir;
    private String tmpRoot = Files.isDirectory(Path.of("/dev/shm")) ? "/dev/shm" : System.getProperty("java.io.tmpdir");
    private int masterPort;
    private int firstWorkerPort;
    private int workerPortStep = 2;
    private final Map<String, String> conf = new HashMap<>();
    private io.strata.worker.store.Durability workerDurability = io.strata.worker.store.Durability.FSYNC;

    public Builder workers(int n) {
      this.workers = n;
      return this;
    }

    /** Where worker dirs go; by default a fresh dir under /dev/shm, deleted on close. */
    public Builder baseDir(Path dir) {
      this.baseDir = dir;
      return this;
    }

    public Builder masterPort(int port) {
      this.masterPort = port;
      return this;
    }

    /** Worker i gets firstWorkerPort + i * step; 0 picks free ports. */
    public Builder firstWorkerPort(int port) {
      this.firstWorkerPort = port;
      return this;
    }

    /**
     * How every worker's block store syncs and unlinks its files (the real fsync and unlink by default): tests hold a
     * step of it, as a dying disk would.
     */
    public Builder workerDurability(io.strata.worker.store.Durability d) {
      this.workerDurability = d;
      return this;
    }

    public Builder set(String key, Object value) {
      conf.put(key, String.valueOf(value));
      return this;
    }

    public Builder setAll(Map<String, String> values) {
      conf.putAll(values);
      return this;
    }

    /** Sets every {@code strata.*} JVM system property as a key (a benchmark's run settings from its command line). */
    public Builder setStrataSystemProperties() {
      for (String k : System.getProperties().stringPropertyNames()) {
        if (k.startsWith("strata.")) {
          set(k, System.getProperty(k));
        }
      }
      return this;
    }

    public LocalStrataCluster build() throws IOException {
      return new LocalStrataCluster(this);
    }
  }

  /** Starts the master and the workers and waits until every worker is registered. */
  public LocalStrataCluster start() throws IOException {
    Map<String, String> c = new HashMap<>();
    c.put(CommonKeys.MASTER_HOSTNAME.name(), "localhost");
    c.put(CommonKeys.MASTER_RPC_PORT.name(), Integer.toString(masterPort));
    c.put(MasterKeys.BIND_HOST.name(), "127.0.0.1");
    c.put(WorkerKeys.BIND_HOST.name(), "127.0.0.1");
    c.put(WorkerKeys.HOSTNAME.name(), "localhost");
    c.put(WorkerKeys.HEARTBEAT_INTERVAL.name(), "200ms");
    c.put(MasterKeys.WORKER_TIMEOUT.name(), "5s");
    c.put(MasterKeys.LOST_WORKER_CHECK_INTERVAL.name(), "200ms");
    c.put(MasterKeys.JOURNAL_DIR.name(), baseDir.resolve("journal").toString());
    c.put(MasterKeys.ROOT_UFS.name(), baseDir.resolve("underFSStorage").toString());
    c.putAll(spec.conf);
    baseConf = StrataConf.of(c);
    master = new MasterProcess(baseConf, Clock.systemUTC()).start();
    for (int i = 0; i < spec.workers; i++) {
      addWorker();
    }
    waitForWorkers(spec.workers, 30_000);
    return this;
  }

  /** Starts one more worker with its own port and dir; returns its index. */
  public int addWorker() throws IOException {
    return addWorker(Map.of());
  }

  /** Starts one more worker with its own port and dir, and these settings on top; returns its index. */
  public int addWorker(Map<String, String> overrides) throws IOException {
    int i = workerConfs.size();
    int port = spec.firstWorkerPort != 0 ? spec.firstWorkerPort + i * spec.workerPortStep : FreePorts.loopback();
    Map<String, String> w = new HashMap<>(baseConf.explicitValues());
    w.put(WorkerKeys.RPC_PORT.name(), Integer.toString(port));
    String dirs = spec.conf.get(WorkerKeys.TIER0_DIRS.name());
    if (dirs == null) {
      w.put(WorkerKeys.TIER0_DIRS.name(), baseDir.resolve("worker-" + i).toString());
    } else if (i > 0 && !dirs.contains("${strata.worker.rpc.port}")) {
      throw new IllegalArgumentException(WorkerKeys.TIER0_DIRS.name() + "=" + dirs + " would be shared by "
          + "several workers: put ${strata.worker.rpc.port} in it so each worker has its own dir");
    }
    w.putAll(overrides);
    StrataConf conf = StrataConf.of(w);
    workerConfs.add(conf);
    workers.add(new WorkerProcess(conf, Clock.systemUTC()).durability(spec.workerDurability).start());
    return i;
  }

  /** Waits until the master lists {@code n} live workers. */
  public void waitForWorkers(int n, long timeoutMs) throws IOException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    try (FileSystem fs = FileSystem.create(clientConf())) {
      while (true) {
        try {
          if (fs.getWorkers().size() >= n) {
            return;
          }
        } catch (IOException e) {
          if (System.nanoTime() > deadline) {
            throw e;
          }
        }
        if (System.nanoTime() > deadline) {
          throw new IOException("Only " + fs.getWorkers().size() + " of " + n + " workers registered within "
              + timeoutMs + " ms");
        }
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted", e);
        }
      }
    }
  }

  /** Configuration a client of this cluster uses. */
  public StrataConf clientConf() {
    return StrataConf.of(Map.of(CommonKeys.MASTER_HOSTNAME.name(), "localhost",
        CommonKeys.MASTER_RPC_PORT.name(), Integer.toString(masterPort))).withAll(spec.conf);
  }

  /** A client closed with the cluster. */
  public synchronized FileSystem client() {
    FileSystem fs = FileSystem.create(clientConf());
    clients.add(fs);
    return fs;
  }

  public MasterProcess master() {
    return master;
  }

  public int masterPort() {
    return masterPort;
  }

  public List<WorkerProcess> workers() {
    return workers;
  }

  public WorkerProcess worker(int i) {
    return workers.get(i);
  }

  /** Stops worker i (its blocks stay in its dir). */
  public void stopWorker(int i) {
    workers.get(i).close();
  }

  /** Worker i's configuration (its port and dirs), to start it by hand. */
  public StrataConf workerConf(int i) {
    return workerConfs.get(i);
  }

  /** Starts worker i again on its port and dir (after {@link #stopWorker}). */
  public WorkerProcess restartWorker(int i) throws IOException {
    WorkerProcess w = new WorkerProcess(workerConfs.get(i), Clock.systemUTC()).durability(spec.workerDurability)
        .start();
    workers.set(i, w);
    return w;
  }

  /** Stops the master and starts a new one on the same port and journal: it recovers the namespace. */
  public void restartMaster() throws IOException {
    master.close();
    master = new MasterProcess(baseConf, Clock.systemUTC()).start();
  }

  /**
   * Restarts the master with {@code overrides} on top of its configuration (for one, other cluster defaults
   * for clients: {@code strata.user.*} keys); later plain restarts drop them again.
   */
  public void restartMaster(Map<String, String> overrides) throws IOException {
    master.close();
    master = new MasterProcess(baseConf.withAll(overrides), Clock.systemUTC()).start();
  }

  public Path baseDir() {
    return baseDir;
  }

  /** The local dir of the root under file system (unless the configuration names another). */
  public Path rootUfsDir() {
    String set = spec.conf.get(MasterKeys.ROOT_UFS.name());
    return set != null ? Path.of(set) : baseDir.resolve("underFSStorage");
  }

  @Override
  public void close() {
    for (FileSystem fs : clients) {
      try {
        fs.close();
      } catch (IOException ignored) {
        // closing channels only
      }
    }
    for (WorkerProcess w : workers) {
      w.close();
    }
    if (master != null) {
      master.close();
    }
    if (spec.baseDir == null) {
      deleteRecursively(baseDir);
    }
  }

  /** Deletes a dir tree (cluster dirs, benchmark dirs); a missing dir is fine. */
  public static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.deleteIfExists(p);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
