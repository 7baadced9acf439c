package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.conf.StrataConf;
import io.strata.minicluster.LocalStrataCluster;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code strata fs} commands of the under file system and cache policies, through the CLI's public
 * entry point against a real master and worker with a local-dir UFS: the write and read type options, the
 * {@code persistence=} line of {@code stat}, the {@code location} line format, free, load, persist, pin,
 * TTLs, checksum, mount and loadMetadata, with their outputs and exit codes.
 */
class UfsShellIntegrationTest {
  private static final int BLOCK = 64 * 1024;
  private static final int LENGTH = BLOCK * 5 / 2;

  private static LocalStrataCluster cluster;
  private static StrataConf conf;

  @TempDir
  static Path local;
  private String out;
  private String err;
  private byte[] outBytes;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).set("strata.user.block.size.default", BLOCK)
        .set("strata.master.ufs.block.size", BLOCK).set("strata.master.persist.check.interval", "100ms")
        .set("strata.master.ttl.check.interval", "50ms").build()
        .start();
    conf = cluster.clientConf();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private int run(String... args) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    ByteArrayOutputStream e = new ByteArrayOutputStream();
    int code = StrataCli.run(conf, new ByteArrayInputStream(new byte[0]), new PrintStream(o, true, StandardCharsets.UTF_8),
        new PrintStream(e, true, StandardCharsets.UTF_8), args);
    outBytes = o.toByteArray();
    out = o.toString(StandardCharsets.UTF_8);
    err = e.toString(StandardCharsets.UTF_8);
    return code;
  }

  private static byte[] data(long seed, int n) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  private Path localFile(String name, byte[] content) throws IOException {
    return Files.write(local.resolve(name), content);
  }

  private List<String> lines() {
    return out.lines().toList();
  }

  private String statField(String path, String key) {
    assertThat(run("fs", "stat", path)).as(err).isEqualTo(0);
    return lines().stream().filter(l -> l.startsWith(key + "=")).findFirst()
        .map(l -> l.substring(key.length() + 1)).orElseThrow(() -> new AssertionError("no " + key + " in " + out));
  }

  @Test
  void copyFromLocal_withEachWriteType_isVisibleInStat_andTheUfs() throws Exception {
    run("fs", "mkdir", "-p", "/types");
    byte[] content = data(1, LENGTH);
    Path src = localFile("types.bin", content);
    String[][] cases = {{"MUST_CACHE", "NOT_PERSISTED"}, {"CACHE_THROUGH", "PERSISTED"}, {"THROUGH", "PERSISTED"}};
    for (String[] c : cases) {
      assertThat(run("fs", "copyFromLocal", "--write-type=" + c[0], src.toString(), "/types/" + c[0]))
          .as(err).isEqualTo(0);
      assertThat(statField("/types/" + c[0], "persistence")).as(c[0]).isEqualTo(c[1]);
      Path inUfs = cluster.rootUfsDir().resolve("types/" + c[0]);
      if (c[1].equals("PERSISTED")) {
        assertThat(Files.readAllBytes(inUfs)).isEqualTo(content);
      } else {
        assertThat(inUfs).doesNotExist();
      }
      assertThat(run("fs", "cat", "--read-type=NO_CACHE", "/types/" + c[0])).isEqualTo(0);
      assertThat(outBytes).isEqualTo(content);
    }
    assertThat(run("fs", "ls", "-l", "/types")).isEqualTo(0);
    assertThat(out).containsPattern("NOT_PERSISTED +/types/MUST_CACHE").containsPattern("PERSISTED +/types/THROUGH");
    assertThat(run("fs", "copyFromLocal", "--write-type=SOMETIMES", src.toString(), "/types/x")).isEqualTo(2);
    assertThat(err).contains("SOMETIMES").contains("MUST_CACHE, CACHE_THROUGH, THROUGH, ASYNC_THROUGH");
    assertThat(run("fs", "cat", "--read-type=MAYBE", "/types/THROUGH")).isEqualTo(2);
    assertThat(err).contains("MAYBE");
  }

  @Test
  void location_free_load_checksum_followTheBlocks() throws Exception {
    byte[] content = data(2, LENGTH);
    assertThat(run("fs", "copyFromLocal", "--write-type=CACHE_THROUGH", localFile("loc.bin", content).toString(),
        "/loc.bin")).as(err).isEqualTo(0);
    assertThat(run("fs", "location", "/loc.bin")).isEqualTo(0);
    assertThat(lines()).hasSize(3).allMatch(l -> l.matches(
        "block=\\d+ offset=\\d+ length=\\d+ workers=localhost:\\d+ tiers=MEM"));
    assertThat(lines().get(2)).contains("offset=" + 2 * BLOCK + " length=" + (LENGTH - 2 * BLOCK));
    assertThat(run("fs", "free", "/loc.bin")).as(err).isEqualTo(0);
    assertThat(out).isEqualTo("Freed /loc.bin (1 files, 3 blocks)\n");
    assertThat(run("fs", "location", "/loc.bin")).isEqualTo(0);
    assertThat(lines()).hasSize(3).allMatch(l -> l.endsWith(" workers= tiers="));
    assertThat(run("fs", "load", "/loc.bin")).as(err).isEqualTo(0);
    assertThat(run("fs", "location", "/loc.bin")).isEqualTo(0);
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> {
      run("fs", "location", "/loc.bin");
      return lines().stream().allMatch(l -> l.contains("workers=localhost:"));
    });
    assertThat(run("fs", "checksum", "/loc.bin")).isEqualTo(0);
    String md5 = HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(content));
    assertThat(out).isEqualTo(md5 + "  /loc.bin\n");
    assertThat(run("fs", "free", "/nope")).isEqualTo(1);
    assertThat(err).isEqualTo("free: /nope: No such file or directory\n");
  }

  @Test
  void persist_pin_andTtl_showInStat() throws Exception {
    assertThat(run("fs", "copyFromLocal", "--write-type=MUST_CACHE", localFile("p.bin", data(3, 1000)).toString(),
        "/p.bin")).as(err).isEqualTo(0);
    assertThat(run("fs", "free", "/p.bin")).isEqualTo(1);
    assertThat(err).contains("NOT_PERSISTED");
    assertThat(run("fs", "persist", "/p.bin")).as(err).isEqualTo(0);
    assertThat(out).isEqualTo("Persisted /p.bin\n");
    assertThat(statField("/p.bin", "persistence")).isEqualTo("PERSISTED");
    assertThat(Files.readAllBytes(cluster.rootUfsDir().resolve("p.bin"))).isEqualTo(data(3, 1000));
    assertThat(run("fs", "pin", "/p.bin")).isEqualTo(0);
    assertThat(statField("/p.bin", "pinned")).isEqualTo("true");
    assertThat(run("fs", "free", "/p.bin")).isEqualTo(1);
    assertThat(err).contains("pinned");
    assertThat(run("fs", "unpin", "/p.bin")).isEqualTo(0);
    assertThat(statField("/p.bin", "pinned")).isEqualTo("false");
    assertThat(run("fs", "setTtl", "--action", "FREE", "/p.bin", "1h")).as(err).isEqualTo(0);
    assertThat(statField("/p.bin", "ttl_ms")).isEqualTo("3600000");
    assertThat(statField("/p.bin", "ttl_action")).isEqualTo("FREE");
    assertThat(run("fs", "unsetTtl", "/p.bin")).isEqualTo(0);
    assertThat(statField("/p.bin", "ttl_ms")).isEqualTo("-1");
  }

  @Test
  void setTtl_ofLongMaxValue_meansNever_theFileSurvivesManyTtlChecks() throws Exception {
    byte[] content = data(7, 1000);
    assertThat(run("fs", "copyFromLocal", "--write-type=MUST_CACHE", localFile("never.bin", content).toString(),
        "/never.bin")).as(err).isEqualTo(0);
    assertThat(run("fs", "setTtl", "/never.bin", "9223372036854775807")).as(err).isEqualTo(0);
    assertThat(out).isEqualTo("TTL of /never.bin set to 9223372036854775807 ms (action DELETE)\n");
    // Each marker expires at once (TTL 0), so its disappearance proves a TTL check ran after the one above.
    for (int i = 0; i < 3; i++) {
      String marker = "/ttl-marker-" + i;
      assertThat(run("fs", "copyFromLocal", "--write-type=MUST_CACHE", localFile("m" + i, data(i, 10)).toString(),
          marker)).as(err).isEqualTo(0);
      assertThat(run("fs", "setTtl", marker, "0")).as(err).isEqualTo(0);
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
          .until(() -> run("fs", "stat", marker) == 1);
    }
    assertThat(statField("/never.bin", "ttl_ms")).isEqualTo("9223372036854775807");
    assertThat(run("fs", "cat", "/never.bin")).isEqualTo(0);
    assertThat(outBytes).isEqualTo(content);
  }

  @Test
  void setTtl_beyondTheLargestDuration_isRefusedNamingTheMaximum() {
    for (String ttl : new String[] {"9223372036854775808", "106751991167301d", "99999999999999999999h"}) {
      assertThat(run("fs", "setTtl", "/whatever", ttl)).as(ttl).isEqualTo(2);
      assertThat(err).as(ttl).contains("'" + ttl + "' is too large: the maximum is 9223372036854775807ms");
    }
  }

  @Test
  void mount_listsAndMounts_andLoadMetadataSeesWhatWasWrittenStraightIntoTheUfs() throws Exception {
    assertThat(run("fs", "mount")).isEqualTo(0);
    assertThat(out).contains(" on / (readonly=false, shared=false)");
    Path other = Files.createDirectories(local.resolve("other"));
    assertThat(run("fs", "mount", "--readonly", other.toString(), "/m")).isEqualTo(1); // arguments swapped
    assertThat(run("fs", "mount", "/m", local.resolve("nonexistent").toString())).isEqualTo(1);
    assertThat(err).as("the UFS side is named, not the Strata path").contains("does not exist in the under file system")
        .doesNotContain("No such file or directory");
    assertThat(run("fs", "mount", "--readonly", "/m", other.toString())).as(err).isEqualTo(0);
    assertThat(run("fs", "mount")).isEqualTo(0);
    assertThat(out).contains(" on /m (readonly=true, shared=false)");
    assertThat(run("fs", "ls", "/m")).isEqualTo(0);
    assertThat(out).isEmpty();
    Files.write(other.resolve("late.txt"), "late".getBytes(StandardCharsets.UTF_8));
    assertThat(run("fs", "ls", "/m")).isEqualTo(0);
    assertThat(out).doesNotContain("late.txt"); // loaded once, not re-checked by default
    assertThat(run("fs", "loadMetadata", "/m")).as(err).isEqualTo(0);
    assertThat(run("fs", "cat", "/m/late.txt")).isEqualTo(0);
    assertThat(out).isEqualTo("late");
    assertThat(run("fs", "unmount", "/m")).as(err).isEqualTo(0);
    assertThat(run("fs", "test", "-e", "/m")).isEqualTo(1);
  }
}
