package io.strata.minicluster;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.server.ServerKeys;
import io.strata.worker.WorkerKeys;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * Entry point of {@code bin/strata-start.sh local [--workers N]}: a master and N workers in this JVM with
 * the embedded defaults (loopback, master on 19998, workers on 29999, 30001, ..., storage under
 * /dev/shm). Writes {@code <data dir>/local.ready} once every worker is registered, so the start script
 * can return only when the cluster serves; removes it on exit.
 */
public final class LocalMain {
  private LocalMain() {}

  public static void main(String[] args) throws Exception {
    int workers = 1;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--workers") && i + 1 < args.length) {
        workers = Integer.parseInt(args[++i]);
      } else if (args[i].startsWith("--workers=")) {
        workers = Integer.parseInt(args[i].substring("--workers=".length()));
      } else {
        System.err.println("Usage: LocalMain [--workers N]; unknown argument " + args[i]);
        System.exit(2);
      }
    }
    if (workers < 1 || workers > 16) {
      System.err.println("--workers must be between 1 and 16, got " + workers);
      System.exit(2);
    }
    StrataConf conf = io.strata.server.Startup.loadConf("local cluster",
        java.util.List.of(io.strata.master.MasterKeys.class, WorkerKeys.class, io.strata.client.ClientKeys.class),
        java.util.List.of());
    Path home = Path.of(conf.get(CommonKeys.HOME));
    Path dataDir = home.resolve(conf.get(ServerKeys.DATA_DIR));
    Files.createDirectories(dataDir);
    Path ready = dataDir.resolve("local.ready");
    Files.deleteIfExists(ready);

    Map<String, String> explicit = new HashMap<>(conf.explicitValues());
    int firstWorkerPort = conf.get(WorkerKeys.RPC_PORT);
    LocalStrataCluster.Builder b = LocalStrataCluster.builder().workers(workers).setAll(explicit)
        .baseDir(Path.of("/dev/shm").toFile().isDirectory() ? Path.of("/dev/shm") : dataDir)
        .masterPort(conf.get(CommonKeys.MASTER_RPC_PORT)).firstWorkerPort(firstWorkerPort);
    // The journal stays under the data dir, so a stop/start (or a kill -9 and start) keeps the namespace.
    b.set(io.strata.master.MasterKeys.JOURNAL_DIR.name(),
        io.strata.master.MasterProcess.journalDir(conf).toAbsolutePath().toString());
    // The root under file system is the configured one (default ./underFSStorage under strata.home), not the
    // mini cluster's temporary dir: it holds the durable copy across restarts.
    b.set(io.strata.master.MasterKeys.ROOT_UFS.name(), conf.get(io.strata.master.MasterKeys.ROOT_UFS));
    if (!conf.isSet(WorkerKeys.TIER0_DIRS)) {
      b.set(WorkerKeys.TIER0_DIRS.name(), WorkerKeys.TIER0_DIRS.defaultValue());
    }
    // Local mode keeps the production timeouts (not the test cluster's short ones) unless configured.
    b.set(WorkerKeys.HEARTBEAT_INTERVAL.name(), conf.get(WorkerKeys.HEARTBEAT_INTERVAL).toMillis() + "ms");
    b.set(io.strata.master.MasterKeys.WORKER_TIMEOUT.name(),
        conf.get(io.strata.master.MasterKeys.WORKER_TIMEOUT).toMillis() + "ms");
    LocalStrataCluster cluster = io.strata.server.Startup.start("local cluster", () -> b.build().start());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        Files.deleteIfExists(ready);
      } catch (Exception ignored) {
        // best effort
      }
      cluster.close();
      stopped.countDown();
    }, "local-shutdown"));
    Files.writeString(ready, "master=localhost:" + cluster.masterPort() + " workers=" + workers + "\n",
        StandardCharsets.UTF_8);
    System.out.println("Strata local cluster serving: master localhost:" + cluster.masterPort() + ", "
        + workers + " worker(s)");
    stopped.await();
  }
}
