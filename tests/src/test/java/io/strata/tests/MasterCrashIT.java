package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.common.conf.StrataConf;
import io.strata.tests.Scripts.Result;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real master process (bin/strata-start.sh master) is killed with SIGKILL while four clients storm it
 * with creates, renames and deletes, each in its own subtree. After a restart on the same journal, every
 * subtree is exactly what the client's acknowledged operations made it, give or take the one operation
 * that was in flight, which is there whole or not at all.
 */
class MasterCrashIT {
  private static final int THREADS = 4;
  /** The storm stops at this many acknowledged operations, or after two seconds. */
  private static final int TARGET_OPS = 600;

  @TempDir
  static Path tmp;
  private static final Map<String, String> env = new HashMap<>();

  static Result run(String... cmd) throws Exception {
    return Scripts.run(tmp, env, cmd);
  }

  @AfterAll
  static void stopAll() throws Exception {
    run("bin/strata-stop.sh", "all");
  }

  private static FileSystem client(int port) {
    return FileSystem.create(StrataConf.of(Map.of(
        "strata.master.hostname", "localhost",
        "strata.master.rpc.port", Integer.toString(port),
        "strata.network.rpc.timeout", "5s",
        // Where clients retry a master that is away, give up at once: a retry would re-send an operation
        // the dead master may have applied, after this test stopped counting.
        "strata.user.master.retry.window", "0s",
        // MUST_CACHE: this test counts the journal entries of acknowledged operations; background
        // persistence (ASYNC_THROUGH, the default) would add entries no client asked for.
        "strata.user.file.writetype.default", "MUST_CACHE")));
  }

  // ------------------------------------------------------------------ the model of one subtree

  enum Kind { DIR, FILE, INCOMPLETE_FILE }

  @FunctionalInterface
  private interface Call {
    void run() throws Exception;
  }

  /**
   * One client operation: the call, how many journal entries it writes, the subtree after it, and (for a
   * create, whose close is a second call) the subtree when only its first call got through.
   */
  private record Op(String what, Call call, int entries, TreeMap<String, Kind> after,
      TreeMap<String, Kind> alsoAfter) {}

  /** A client thread's view: its subtree as its acknowledged operations left it, and the op in flight. */
  private static final class Storm implements Runnable {
    final String root;
    final FileSystem fs;
    final Random random;
    final CountDownLatch enough;
    final AtomicInteger acked;
    TreeMap<String, Kind> model = new TreeMap<>();
    /** Journal entries the acknowledged operations wrote. */
    long ackedEntries;
    int ackedOps;
    Op inFlight;
    Exception failure;
    /** The failure came before the test killed the master: a bug, not the crash. */
    boolean failedBeforeKill;
    volatile boolean killed;
    private int counter;

    Storm(int n, FileSystem fs, CountDownLatch enough, AtomicInteger acked) {
      this.root = "/t" + n;
      this.fs = fs;
      this.random = new Random(1000 + n);
      this.enough = enough;
      this.acked = acked;
    }

    void createRoot() throws Exception {
      fs.createDirectory(root);
      model.put(root, Kind.DIR);
      ackedEntries++;
    }

    @Override
    public void run() {
      while (true) {
        Op op = next();
        inFlight = op;
        try {
          op.call().run();
        } catch (Exception e) {
          failure = e;
          failedBeforeKill = !killed;
          return;
        }
        model = op.after();
        ackedEntries += op.entries();
        ackedOps++;
        inFlight = null;
        if (acked.incrementAndGet() >= TARGET_OPS) {
          enough.countDown();
        }
      }
    }

    private String fresh(String prefix) {
      return prefix + (counter++);
    }

    private String pick(boolean dirsOnly, boolean rootToo) {
      List<String> candidates = new ArrayList<>();
      for (Map.Entry<String, Kind> e : model.entrySet()) {
        if ((!dirsOnly || e.getValue() == Kind.DIR) && (rootToo || !e.getKey().equals(root))) {
          candidates.add(e.getKey());
        }
      }
      return candidates.isEmpty() ? null : candidates.get(random.nextInt(candidates.size()));
    }

    private Op next() {
      int dice = random.nextInt(100);
      TreeMap<String, Kind> after = new TreeMap<>(model);
      String dir = pick(true, true);
      String victim = pick(false, false);
      if (dice < 20 || victim == null) {
        String p = dir + "/" + fresh("d");
        after.put(p, Kind.DIR);
        return new Op("mkdir " + p, () -> fs.createDirectory(p), 1, after, null);
      }
      if (dice < 30) {
        String parent = dir + "/" + fresh("p");
        String p = parent + "/" + fresh("q");
        after.put(parent, Kind.DIR);
        after.put(p, Kind.DIR);
        return new Op("mkdir -p " + p,
            () -> fs.createDirectory(p, CreateDirectoryOptions.defaults().withRecursive(true)), 2, after, null);
      }
      if (dice < 65) {
        boolean nested = dice >= 55; // into a new directory: its Mkdir and the CreateFile are one operation
        String parent = nested ? dir + "/" + fresh("n") : dir;
        String p = parent + "/" + fresh("f");
        TreeMap<String, Kind> incomplete = new TreeMap<>(model);
        if (nested) {
          after.put(parent, Kind.DIR);
          incomplete.put(parent, Kind.DIR);
        }
        after.put(p, Kind.FILE);
        incomplete.put(p, Kind.INCOMPLETE_FILE);
        return new Op((nested ? "create -p " : "create ") + p,
            () -> fs.createFile(p, CreateFileOptions.defaults().withRecursive(nested)).close(),
            // + a RequestDone each for the create and the complete (request ids: a retry gets the first answer)
            nested ? 5 : 4, after, incomplete);
      }
      if (dice < 85) {
        String dstParent = pick(true, true);
        if (dstParent.equals(victim) || dstParent.startsWith(victim + "/")) {
          dstParent = root;
        }
        String dst = dstParent + "/" + fresh("r");
        after.clear();
        for (Map.Entry<String, Kind> e : model.entrySet()) {
          String k = e.getKey();
          if (k.equals(victim) || k.startsWith(victim + "/")) {
            after.put(dst + k.substring(victim.length()), e.getValue());
          } else {
            after.put(k, e.getValue());
          }
        }
        return new Op("rename " + victim + " " + dst, () -> fs.rename(victim, dst), 2, after, null); // + RequestDone
      }
      after.keySet().removeIf(k -> k.equals(victim) || k.startsWith(victim + "/"));
      // + RequestDone
      return new Op("delete " + victim, () -> fs.delete(victim, DeleteOptions.defaults().withRecursive(true)), 2,
          after, null);
    }
  }

  private static TreeMap<String, Kind> actual(FileSystem fs, String root) throws Exception {
    TreeMap<String, Kind> out = new TreeMap<>();
    if (!fs.exists(root)) {
      return out;
    }
    out.put(root, Kind.DIR);
    for (URIStatus s : fs.listStatus(root, ListStatusOptions.defaults().withRecursive(true))) {
      out.put(s.path(), s.directory() ? Kind.DIR : s.complete() ? Kind.FILE : Kind.INCOMPLETE_FILE);
    }
    return out;
  }

  // ------------------------------------------------------------------ the test

  @Test
  void masterKilledDuringAStorm_recoversEveryAcknowledgedOperation_andNoHalfOperation() throws Exception {
    int port = Scripts.freePort();
    env.put("STRATA_MASTER_RPC_PORT", Integer.toString(port));
    env.put("STRATA_LOGS_DIR", tmp.resolve("logs").toString());
    env.put("STRATA_DATA_DIR", tmp.resolve("data").toString());
    env.put("STRATA_MASTER_MOUNT_TABLE_ROOT_UFS", tmp.resolve("underFSStorage").toString());
    env.put("STRATA_HEAP", "256m");
    Result start = run("bin/strata-start.sh", "master");
    assertThat(start.exit()).as(start.err()).isZero();
    Path pidFile = tmp.resolve("data/pids/master.pid");
    long pid = Long.parseLong(Files.readString(pidFile).trim());
    ProcessHandle master = ProcessHandle.of(pid).orElseThrow();

    CountDownLatch enough = new CountDownLatch(1);
    AtomicInteger acked = new AtomicInteger();
    List<Storm> storms = new ArrayList<>();
    List<FileSystem> clients = new ArrayList<>();
    for (int n = 0; n < THREADS; n++) {
      FileSystem fs = client(port);
      clients.add(fs);
      Storm s = new Storm(n, fs, enough, acked);
      s.createRoot();
      storms.add(s);
    }
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    storms.forEach(pool::execute);
    // The storm runs until TARGET_OPS are acknowledged (a count, not a time: a loaded machine acknowledges
    // fewer per second), within 30 s at most.
    enough.await(30, TimeUnit.SECONDS);
    storms.forEach(s -> s.killed = true);
    master.destroyForcibly(); // SIGKILL: no shutdown hook, no flush
    assertThat(master.onExit().get(10, TimeUnit.SECONDS).isAlive()).isFalse();
    pool.shutdown();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).as("every client saw the master go").isTrue();
    clients.forEach(c -> {
      try {
        c.close();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });

    int totalAcked = 0;
    long ackedEntries = 0;
    for (Storm s : storms) {
      assertThat(s.failure).as("%s stopped only because the master died", s.root).isNotNull();
      assertThat(s.failedBeforeKill).as("%s failed before the kill: %s", s.root, s.failure).isFalse();
      assertThat(s.inFlight).as("%s's failed operation is known", s.root).isNotNull();
      totalAcked += s.ackedOps;
      ackedEntries += s.ackedEntries;
    }
    assertThat(totalAcked).as("the storm did enough to matter").isGreaterThan(100);
    System.out.printf("MasterCrashIT: %d operations acknowledged (%d journal entries); in flight: %s%n", totalAcked,
        ackedEntries, storms.stream().map(s -> s.inFlight.what()).toList());

    Result restart = run("bin/strata-start.sh", "master");
    assertThat(restart.exit()).as(restart.err()).isZero();
    String log = Files.readString(tmp.resolve("logs/master.log"), StandardCharsets.UTF_8);
    Matcher recovered = Pattern.compile("Recovered (\\d+) journal entries").matcher(log);
    assertThat(recovered.find()).as("the restarted master recovered its journal:\n%s", log).isTrue();
    long entries = Long.parseLong(recovered.group(1));
    // Every acknowledged entry, plus at most the in-flight operations' (5 entries at most each).
    assertThat(entries).isBetween(ackedEntries, ackedEntries + 5L * THREADS);

    try (FileSystem fs = client(port)) {
      long maxId = 0;
      for (Storm s : storms) {
        TreeMap<String, Kind> now = actual(fs, s.root);
        List<TreeMap<String, Kind>> allowed = new ArrayList<>();
        allowed.add(s.model); // the in-flight operation did not happen
        allowed.add(s.inFlight.after()); // it happened whole
        if (s.inFlight.alsoAfter() != null) {
          allowed.add(s.inFlight.alsoAfter());
        }
        assertThat(allowed).as("%s after %d acknowledged ops, in flight: %s", s.root, s.ackedOps, s.inFlight.what())
            .contains(now);
        for (URIStatus st : fs.listStatus(s.root, ListStatusOptions.defaults().withRecursive(true))) {
          maxId = Math.max(maxId, st.id());
        }
      }
      // The recovered master takes new changes, with ids it never handed out before.
      fs.createFile("/after-restart").close();
      assertThat(fs.getStatus("/after-restart").id()).isGreaterThan(maxId);
      assertThat(fs.getStatus("/after-restart").complete()).isTrue();
    }
  }
}
