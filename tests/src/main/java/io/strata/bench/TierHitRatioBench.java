package io.strata.bench;

import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.common.conf.ValueParser;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.worker.WorkerProcess;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * {@code strata bench tier}: how well a block annotator keeps a skewed working set in the top tier. An
 * in-process cluster of one worker with MEM (quota M, default 64MB) over an SSD tier large enough for
 * everything gets files totalling 3M (1MB each, one block per file). Then whole-file reads: 90% to a hot
 * set of {@code --hot-fraction} of the files (20% by default, which fits in MEM), the rest uniform over
 * the cold files, with one tier-manager round (reserver and alignment) every 100 reads. A warm-up of a
 * quarter of {@code --reads} lets the policy settle; the {@code --reads} after it are measured.
 *
 * <p>The figure is the MEM hit ratio (block reads MEM served / all block reads, from the store's per-tier
 * counters) beside the baseline a cache without a policy would hit under uniform placement: MEM capacity
 * over data size. Both tiers live in the same tmpfs dir (or the temp dir when there is no /dev/shm):
 * this measures placement, not devices, so time is not reported.
 *
 * <p>Output, one line per annotator:
 * {@code bench op=tier_hit_ratio annotator=<A> reads=<n> mem_hit_ratio=<x> baseline=uniform_random
 * mem_fraction=<M/data> ratio=<x/(M/data)>}. Single-threaded.
 */
public final class TierHitRatioBench {
  private static final int BLOCK = 1 << 20;
  private static final int READS_PER_ROUND = 100;
  private static final double HOT_READ_SHARE = 0.9;

  private final String annotator;
  private final long memQuota;
  private final double hotFraction;
  private final int reads;
  private final long seed;

  private TierHitRatioBench(String annotator, long memQuota, double hotFraction, int reads, long seed) {
    this.annotator = annotator;
    this.memQuota = memQuota;
    this.hotFraction = hotFraction;
    this.reads = reads;
    this.seed = seed;
  }

  private static void usage(PrintStream out) {
    out.println("Usage: strata bench tier [--annotator LRU|LRFU[,...]] [--hot-fraction F] [--reads N] "
        + "[--mem SIZE] [--seed S]");
    out.println("  --annotator     annotators to compare, comma separated (default LRU,LRFU)");
    out.println("  --hot-fraction  share of the files that gets 90% of the reads (default 0.2)");
    out.println("  --reads         measured whole-file reads per annotator (default 2000)");
    out.println("  --mem           MEM tier quota; the data is 3 times this (default 64MB)");
    out.println("  --seed          seed of the hot set and the read sequence (default 1)");
  }

  public static void main(String[] args) throws Exception {
    List<String> annotators = List.of("LRU", "LRFU");
    double hotFraction = 0.2;
    int reads = 2000;
    long mem = 64L << 20;
    long seed = 1;
    try {
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        if (a.equals("-h") || a.equals("--help")) {
          usage(System.out);
          return;
        }
        int eq = a.indexOf('=');
        String name = eq > 0 ? a.substring(0, eq) : a;
        String value;
        if (eq > 0) {
          value = a.substring(eq + 1);
        } else if (i + 1 < args.length) {
          value = args[++i];
        } else {
          throw new IllegalArgumentException(name + " needs a value");
        }
        switch (name) {
          case "--annotator":
            annotators = List.of(value.toUpperCase(Locale.ROOT).split(","));
            break;
          case "--hot-fraction":
            hotFraction = Double.parseDouble(value);
            break;
          case "--reads":
            reads = Integer.parseInt(value);
            break;
          case "--mem":
            mem = ValueParser.parseBytes(value);
            break;
          case "--seed":
            seed = Long.parseLong(value);
            break;
          default:
            throw new IllegalArgumentException("unknown option " + name);
        }
      }
      if (!(hotFraction > 0 && hotFraction < 1)) {
        throw new IllegalArgumentException("--hot-fraction must be in (0, 1), got " + hotFraction);
      }
      if (reads < READS_PER_ROUND) {
        throw new IllegalArgumentException("--reads must be at least " + READS_PER_ROUND + ", got " + reads);
      }
      if (mem < 4L * BLOCK || mem % BLOCK != 0) {
        throw new IllegalArgumentException("--mem must be a multiple of 1MB and at least 4MB, got " + mem);
      }
    } catch (IllegalArgumentException e) {
      System.err.println("bench tier: " + e.getMessage());
      usage(System.err);
      System.exit(2);
      return;
    }
    for (String a : annotators) {
      new TierHitRatioBench(a, mem, hotFraction, reads, seed).run(System.out);
    }
  }

  private void run(PrintStream out) throws IOException {
    Path shm = Path.of("/dev/shm");
    Path base = Files.createTempDirectory(Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")),
        "strata-bench-tier-");
    int fileCount = (int) (3 * memQuota / BLOCK);
    long dataBytes = (long) fileCount * BLOCK;
    try (LocalStrataCluster cluster = LocalStrataCluster.builder().workers(1).baseDir(base)
        .set("strata.worker.tier.0.alias", "MEM")
        .set("strata.worker.tier.0.dirs", base.resolve("mem"))
        .set("strata.worker.tier.0.quota", memQuota)
        .set("strata.worker.tier.1.alias", "SSD")
        .set("strata.worker.tier.1.dirs", base.resolve("ssd"))
        .set("strata.worker.tier.1.quota", 2 * dataBytes)
        .set("strata.worker.annotator.class", annotator)
        // The benchmark runs the rounds itself, at a fixed rate in reads rather than in time.
        .set("strata.worker.tier.manager.interval", "1h")
        .build().start()) {
      FileSystem fs = cluster.client();
      WorkerProcess worker = cluster.worker(0);
      byte[] content = new byte[BLOCK];
      new Random(seed).nextBytes(content);
      List<String> paths = new ArrayList<>(fileCount);
      for (int i = 0; i < fileCount; i++) {
        String path = "/bench-tier/f" + i;
        try (FileOutStream o = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK))) {
          o.write(content);
        }
        paths.add(path);
      }
      // The hot set is a random sample, so where the writes happened to place it does not matter.
      List<String> shuffled = new ArrayList<>(paths);
      Random random = new Random(seed + 1);
      Collections.shuffle(shuffled, random);
      int hotCount = Math.max(1, (int) Math.round(hotFraction * fileCount));
      List<String> hot = shuffled.subList(0, hotCount);
      List<String> cold = shuffled.subList(hotCount, shuffled.size());

      byte[] buf = new byte[BLOCK];
      readPhase(fs, worker, hot, cold, reads / 4, random, buf);
      long[] before = worker.tieredStore().readsByTier();
      readPhase(fs, worker, hot, cold, reads, random, buf);
      long[] after = worker.tieredStore().readsByTier();

      long total = 0;
      for (int t = 0; t < after.length; t++) {
        total += after[t] - before[t];
      }
      double hitRatio = total == 0 ? 0 : (double) (after[0] - before[0]) / total;
      double memFraction = (double) memQuota / dataBytes;
      out.println(String.format(Locale.ROOT,
          "bench op=tier_hit_ratio annotator=%s reads=%d mem_hit_ratio=%.3f baseline=uniform_random "
              + "mem_fraction=%.3f ratio=%.3f", annotator, reads, hitRatio, memFraction, hitRatio / memFraction));
      out.flush();
    } finally {
      LocalStrataCluster.deleteRecursively(base);
    }
  }

  /** {@code n} whole-file reads, 90% from {@code hot}; a tier-manager round every 100 reads. */
  private static void readPhase(FileSystem fs, WorkerProcess worker, List<String> hot, List<String> cold, int n,
      Random random, byte[] buf) throws IOException {
    for (int i = 1; i <= n; i++) {
      List<String> set = cold.isEmpty() || random.nextDouble() < HOT_READ_SHARE ? hot : cold;
      String path = set.get(random.nextInt(set.size()));
      try (FileInStream in = fs.openFile(path)) {
        while (in.read(buf, 0, buf.length) >= 0) {
          // whole file, content unchecked: the integration tests check bytes
        }
      }
      if (i % READS_PER_ROUND == 0) {
        worker.tierManager().runOnce();
      }
    }
  }
}
