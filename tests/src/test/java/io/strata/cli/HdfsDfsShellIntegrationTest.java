package io.strata.cli;

import static io.strata.cli.CliFiles.concat;
import static io.strata.cli.CliFiles.data;
import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.ClusterInfo;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.minicluster.LocalStrataCluster;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code hdfs dfs} forms of {@code strata fs} against a real master and two real workers in this JVM,
 * through the public entry point: dash commands, glob patterns, {@code strata://} paths, and count, cp,
 * df, text, getmerge, find, rmdir, moveFromLocal, setrep, chmod, chown and chgrp with their outputs and exit
 * codes.
 *
 * <p>One cluster for the class; each test works under {@code /h-<test method>}, made by {@link #setUp}
 * with {@code d/f} (10 bytes), {@code d/sub/g} (1500 bytes), {@code top} (5 bytes) and {@code data/}
 * holding {@code a.bin} (100), {@code b.bin} (200), {@code c.txt} (7) and {@code sub/x.bin} (3).
 */
class HdfsDfsShellIntegrationTest {
  private static LocalStrataCluster cluster;
  private static StrataConf conf;
  private static FileSystem fs;

  @TempDir
  Path local;

  private String base;
  private byte[] outBytes;
  private String out;
  private String err;

  @BeforeAll
  static void startCluster() throws IOException {
    // Creates record this user as owner and group; chown and chgrp change them.
    cluster = LocalStrataCluster.builder().workers(2).set("strata.user.login.name", "alice").build().start();
    conf = cluster.clientConf();
    fs = cluster.client();
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @BeforeEach
  void setUp(TestInfo info) throws IOException {
    base = "/h-" + info.getTestMethod().orElseThrow().getName();
    fs.createDirectory(base + "/d/sub", CreateDirectoryOptions.defaults().withRecursive(true));
    fs.createDirectory(base + "/data/sub", CreateDirectoryOptions.defaults().withRecursive(true));
    write(base + "/d/f", data(1, 10));
    write(base + "/d/sub/g", data(2, 1500));
    write(base + "/top", data(3, 5));
    write(base + "/data/a.bin", data(4, 100));
    write(base + "/data/b.bin", data(5, 200));
    write(base + "/data/c.txt", data(6, 7));
    write(base + "/data/sub/x.bin", data(7, 3));
  }

  // ---- helpers ----

  private static void write(String path, byte[] content) throws IOException {
    CliFiles.write(fs, path, content);
  }

  private static byte[] read(String path) throws IOException {
    return CliFiles.read(fs, path);
  }

  private int run(String... args) {
    return runWith(conf, args);
  }

  private int runWith(StrataConf c, String... args) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    ByteArrayOutputStream e = new ByteArrayOutputStream();
    int code = StrataCli.run(c, new ByteArrayInputStream(new byte[0]), new PrintStream(o, true, StandardCharsets.UTF_8),
        new PrintStream(e, true, StandardCharsets.UTF_8), args);
    outBytes = o.toByteArray();
    out = o.toString(StandardCharsets.UTF_8);
    err = e.toString(StandardCharsets.UTF_8);
    return code;
  }

  /** The last column of each output line: the paths ls prints. */
  private List<String> lsPaths() {
    return out.lines().filter(l -> !l.startsWith("Found ")).map(l -> l.substring(l.lastIndexOf(' ') + 1)).toList();
  }

  private static String masterAuthority() {
    return "localhost:" + conf.get(CommonKeys.MASTER_RPC_PORT);
  }

  // ---- dash forms and help ----

  @Test
  void dashForms_runTheSameCommandsAsThePlainNames() throws IOException {
    assertThat(run("fs", "ls", base + "/d")).isEqualTo(0);
    String plain = out;
    assertThat(run("fs", "-ls", base + "/d")).isEqualTo(0);
    assertThat(out).isEqualTo(plain).startsWith("Found 2 items\n");
    assertThat(run("fs", "-mkdir", "-p", base + "/m/n")).isEqualTo(0);
    assertThat(fs.getStatus(base + "/m/n").directory()).isTrue();
    Path src = Files.write(local.resolve("in.bin"), data(9, 3000));
    assertThat(run("fs", "-copyFromLocal", "-p", "-d", src.toString(), base + "/m/in.bin")).isEqualTo(0);
    assertThat(run("fs", "-get", "-p", "-ignoreCrc", base + "/m/in.bin", local.resolve("got").toString()))
        .isEqualTo(0);
    assertThat(Files.readAllBytes(local.resolve("got"))).isEqualTo(data(9, 3000));
    assertThat(run("fs", "-cat", base + "/m/in.bin")).isEqualTo(0);
    assertThat(outBytes).isEqualTo(data(9, 3000));
    assertThat(run("fs", "-du", "-s", "-h", base + "/m")).isEqualTo(0);
    assertThat(out).isEqualTo("2.9 K  " + base + "/m\n");
    assertThat(run("fs", "-rm", "-r", base + "/m")).isEqualTo(0);
    assertThat(out).isEqualTo("Deleted " + base + "/m\n");
    // Errors carry the plain name, as hdfs prints them.
    assertThat(run("fs", "-cat", base + "/nope")).isEqualTo(1);
    assertThat(err).isEqualTo("cat: " + base + "/nope: No such file or directory\n");
  }

  @Test
  void help_andDashHelp_listTheHdfsCommands() {
    assertThat(run("fs", "-help")).isEqualTo(0);
    String dashed = out;
    assertThat(run("fs", "help")).isEqualTo(0);
    assertThat(out).isEqualTo(dashed);
    for (String name : List.of("count", "cp", "df", "text", "getmerge", "find", "rmdir", "moveFromLocal",
        "setrep", "ls", "put", "mount", "persist", "free", "pin")) {
      assertThat(out).as(name).containsPattern("(?m)^  " + name + " ");
    }
    assertThat(out).contains("-ls, -mkdir -p");
    assertThat(run("fs", "-usage", "count")).isEqualTo(0);
    assertThat(out).startsWith("Usage: strata fs count");
  }

  // ---- globs ----

  @Test
  void glob_expandsPerComponent_inSortedOrder() throws IOException {
    assertThat(run("fs", "ls", base + "/data/*.bin")).isEqualTo(0);
    assertThat(lsPaths()).containsExactly(base + "/data/a.bin", base + "/data/b.bin");
    assertThat(run("fs", "ls", "-d", base + "/d?t[a-z]/{c.txt,sub}")).isEqualTo(0);
    assertThat(lsPaths()).containsExactly(base + "/data/c.txt", base + "/data/sub");
    assertThat(run("fs", "ls", base + "/*/*.bin")).isEqualTo(0); // a pattern in a middle component
    assertThat(lsPaths()).containsExactly(base + "/data/a.bin", base + "/data/b.bin");
    assertThat(run("fs", "ls", "-d", base + "/{data/sub/x.bin,d/f}")).isEqualTo(0); // a group holding /
    assertThat(lsPaths()).containsExactly(base + "/d/f", base + "/data/sub/x.bin");
    assertThat(run("fs", "cat", base + "/data/[ba].bin")).isEqualTo(0);
    assertThat(outBytes).isEqualTo(concat(data(4, 100), data(5, 200)));
    assertThat(run("fs", "rm", base + "/data/*.txt")).isEqualTo(0);
    assertThat(out).isEqualTo("Deleted " + base + "/data/c.txt\n");
    assertThat(fs.exists(base + "/data/a.bin")).isTrue();
  }

  @Test
  void glob_thatMatchesNothing_isNoSuchFile_asHdfsSaysIt_andTheOtherPathsGoOn() {
    assertThat(run("fs", "ls", base + "/x*", base + "/top")).isEqualTo(1);
    assertThat(err).isEqualTo("ls: `" + base + "/x*': No such file or directory\n");
    assertThat(lsPaths()).containsExactly(base + "/top");
    // A pattern whose last component is literal keeps only the paths that exist.
    assertThat(run("fs", "ls", base + "/*/nope")).isEqualTo(1);
    assertThat(err).isEqualTo("ls: `" + base + "/*/nope': No such file or directory\n");
    // A literal path is not globbed: its own message, without hdfs's quotes.
    assertThat(run("fs", "ls", base + "/nope")).isEqualTo(1);
    assertThat(err).isEqualTo("ls: " + base + "/nope: No such file or directory\n");
  }

  @Test
  void glob_malformed_saysWhatIsWrong() {
    assertThat(run("fs", "ls", base + "/data/[ab")).isEqualTo(1);
    assertThat(err).isEqualTo("ls: " + base + "/data/[ab: Illegal file pattern '[ab': the character class [ is "
        + "not closed by ] (at index 0)\n");
    assertThat(out).isEmpty();
  }

  // ---- strata:// URIs ----

  @Test
  void strataUris_workAsPaths_andTheAuthorityPicksTheMaster() throws IOException {
    assertThat(run("fs", "ls", base + "/d")).isEqualTo(0);
    String plain = out;
    for (String form : List.of("strata://" + base + "/d", "strata:" + base + "/d",
        "strata://" + masterAuthority() + base + "/d/")) {
      assertThat(run("fs", "ls", form)).as(form).isEqualTo(0);
      assertThat(out).as(form).isEqualTo(plain);
    }
    // The configured master is a closed port; the URI's authority names the real one.
    StrataConf wrong;
    try (ServerSocket s = new ServerSocket(0)) {
      wrong = conf.with(CommonKeys.MASTER_RPC_PORT, s.getLocalPort());
    }
    String uri = "strata://" + masterAuthority() + base + "/top";
    assertThat(runWith(wrong, "fs", "cat", uri)).isEqualTo(0);
    assertThat(outBytes).isEqualTo(data(3, 5));
    assertThat(runWith(wrong, "fs", "-cp", uri, "strata://" + masterAuthority() + base + "/top2")).isEqualTo(0);
    assertThat(read(base + "/top2")).isEqualTo(data(3, 5));
    assertThat(runWith(wrong, "fs", "ls", "strata://" + masterAuthority() + base + "/data/*.bin")).isEqualTo(0);
    assertThat(lsPaths()).containsExactly(base + "/data/a.bin", base + "/data/b.bin");
  }

  @Test
  void otherSchemes_andASecondMaster_areClearErrors() {
    assertThat(run("fs", "ls", "hdfs://nn:8020" + base, base + "/top")).isEqualTo(1);
    assertThat(err).isEqualTo("ls: hdfs://nn:8020" + base + ": Wrong FS: the scheme is hdfs, not strata "
        + "(strata fs takes plain paths and strata:// URIs)\n");
    assertThat(lsPaths()).containsExactly(base + "/top");
    String other = "strata://otherhost:1" + base;
    assertThat(run("fs", "ls", "strata://" + masterAuthority() + base + "/top", other)).isEqualTo(1);
    assertThat(err).isEqualTo("ls: " + other + ": strata://otherhost:1 names another master than strata://"
        + masterAuthority() + " did: one command works with one master\n");
    assertThat(run("fs", "ls", "strata://host:notaport/x")).isEqualTo(1);
    assertThat(err).isEqualTo("ls: strata://host:notaport/x: strata://host:notaport: the authority is not "
        + "host, host:port, host:port,host:port or zk@host:port\n");
  }

  // ---- count ----

  @Test
  void count_printsDirsFilesAndBytes_inHdfsColumns() {
    assertThat(run("fs", "count", base + "/d", base + "/top", base + "/data/*.bin")).isEqualTo(0);
    assertThat(out).isEqualTo(
        "           2            2               1510 " + base + "/d\n"
        + "           0            1                  5 " + base + "/top\n"
        + "           0            1                100 " + base + "/data/a.bin\n"
        + "           0            1                200 " + base + "/data/b.bin\n");
    assertThat(run("fs", "-count", "-q", "-h", "-v", base)).isEqualTo(0);
    assertThat(out).isEqualTo(
        "       QUOTA       REM_QUOTA     SPACE_QUOTA REM_SPACE_QUOTA    DIR_COUNT   FILE_COUNT       CONTENT_SIZE PATHNAME\n"
        + "        none             inf            none             inf            5            7"
        + "              1.8 K " + base + "\n");
    assertThat(run("fs", "count", base + "/nope")).isEqualTo(1);
    assertThat(err).isEqualTo("count: " + base + "/nope: No such file or directory\n");
  }

  // ---- cp ----

  @Test
  void cp_copiesFilesAndTrees_insideStrata() throws IOException {
    assertThat(run("fs", "cp", base + "/top", base + "/top.copy")).isEqualTo(0);
    assertThat(read(base + "/top.copy")).isEqualTo(data(3, 5));
    assertThat(run("fs", "cp", base + "/d", base + "/d2")).isEqualTo(0);
    assertThat(read(base + "/d2/f")).isEqualTo(data(1, 10));
    assertThat(read(base + "/d2/sub/g")).isEqualTo(data(2, 1500));
    assertThat(run("fs", "cp", base + "/data/*.bin", base + "/d")).isEqualTo(0); // several into a directory
    assertThat(read(base + "/d/a.bin")).isEqualTo(data(4, 100));
    assertThat(read(base + "/d/b.bin")).isEqualTo(data(5, 200));
    assertThat(fs.exists(base + "/d/a.bin._COPYING_")).isFalse();
    assertThat(fs.getStatus(base + "/data/a.bin").length()).isEqualTo(100); // the source stays
  }

  @Test
  void cp_keepsExistingFiles_unlessF_andRefusesBadDestinations() throws IOException {
    assertThat(run("fs", "cp", base + "/top", base + "/d/f")).isEqualTo(1);
    assertThat(err).isEqualTo("cp: " + base + "/d/f: File exists\n");
    assertThat(read(base + "/d/f")).isEqualTo(data(1, 10));
    assertThat(run("fs", "cp", "-f", base + "/top", base + "/d/f")).isEqualTo(0);
    assertThat(read(base + "/d/f")).isEqualTo(data(3, 5));
    assertThat(run("fs", "cp", base + "/top", base + "/data/a.bin", base + "/nodir")).isEqualTo(1);
    assertThat(err).isEqualTo("cp: " + base + "/nodir: No such file or directory\n");
    assertThat(run("fs", "cp", base + "/d", base + "/d/sub")).isEqualTo(1);
    assertThat(err).isEqualTo("cp: " + base + "/d: cannot copy a directory into itself (" + base + "/d/sub/d)\n");
    assertThat(fs.exists(base + "/d/sub/d")).isFalse();
    assertThat(run("fs", "cp", base + "/nope", base + "/x")).isEqualTo(1);
    assertThat(err).isEqualTo("cp: " + base + "/nope: No such file or directory\n");
  }

  // ---- df ----

  @Test
  void df_printsTheClustersCapacity_asHdfsLaysItOut() throws IOException {
    // Workers report their usage by heartbeat, so it may move while the writes of setUp settle: compare
    // with a report the cluster gave both just before and just after the command.
    ClusterInfo[] seen = new ClusterInfo[1];
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() -> {
      ClusterInfo before = fs.getClusterInfo();
      assertThat(run("fs", "df", base)).isEqualTo(0);
      ClusterInfo after = fs.getClusterInfo();
      seen[0] = before;
      return before.usedBytes() == after.usedBytes() && before.capacityBytes() == after.capacityBytes();
    });
    ClusterInfo info = seen[0];
    assertThat(info.capacityBytes()).isPositive();
    assertThat(info.usedBytes()).isPositive();
    assertThat(out.lines().toList()).isEqualTo(SummaryCommands.dfLines("strata://" + masterAuthority(),
        info.capacityBytes(), info.usedBytes(), false));
    List<String> lines = out.lines().toList();
    assertThat(lines.get(0)).matches("Filesystem +Size +Used +Available +Use%");
    long percent = Math.round(100.0 * info.usedBytes() / info.capacityBytes());
    assertThat(lines.get(1)).matches("strata://" + masterAuthority() + " +" + info.capacityBytes() + " +"
        + info.usedBytes() + " +" + (info.capacityBytes() - info.usedBytes()) + " +" + percent + "%");
    assertThat(run("fs", "-df", "-h")).isEqualTo(0);
    assertThat(out.lines().toList().get(1)).contains(" " + Formats.humanSize(info.capacityBytes()) + " ");
    assertThat(run("fs", "df", base + "/nope")).isEqualTo(1);
    assertThat(err).isEqualTo("df: " + base + "/nope: No such file or directory\n");
    assertThat(out).isEmpty();
  }

  // ---- text ----

  @Test
  void text_printsPlainFilesAsTheyAre_andDecompressesGzip() throws IOException {
    byte[] plain = "line one\nline two\n".repeat(200).getBytes(StandardCharsets.UTF_8);
    ByteArrayOutputStream gz = new ByteArrayOutputStream();
    try (GZIPOutputStream z = new GZIPOutputStream(gz)) {
      z.write(plain);
    }
    write(base + "/t.gz", gz.toByteArray());
    write(base + "/t.txt", plain);
    assertThat(run("fs", "text", base + "/t.gz", base + "/t.txt")).isEqualTo(0);
    assertThat(outBytes).isEqualTo(concat(plain, plain));
    assertThat(run("fs", "cat", base + "/t.gz")).isEqualTo(0);
    assertThat(outBytes).isEqualTo(gz.toByteArray()); // cat does not decode
    assertThat(run("fs", "text", base + "/d")).isEqualTo(1);
    assertThat(err).isEqualTo("text: " + base + "/d: Is a directory\n");
  }

  // ---- getmerge ----

  @Test
  void getmerge_concatenatesFilesAndDirectories_inOrder() throws IOException {
    Path dst = local.resolve("merged");
    assertThat(run("fs", "getmerge", base + "/data", base + "/top", dst.toString())).isEqualTo(0);
    // A directory gives the files directly in it, by name (data/sub is left out).
    assertThat(Files.readAllBytes(dst)).isEqualTo(concat(data(4, 100), data(5, 200), data(6, 7), data(3, 5)));
    assertThat(run("fs", "-getmerge", "-nl", base + "/data/*.bin", dst.toString())).isEqualTo(0);
    assertThat(Files.readAllBytes(dst)).isEqualTo(concat(data(4, 100), new byte[] {'\n'}, data(5, 200),
        new byte[] {'\n'}));
    write(base + "/empty", new byte[0]);
    assertThat(run("fs", "getmerge", "-nl", "-skip-empty-file", base + "/empty", base + "/top", dst.toString()))
        .isEqualTo(0);
    assertThat(Files.readAllBytes(dst)).isEqualTo(concat(data(3, 5), new byte[] {'\n'}));
    assertThat(Files.exists(local.resolve("merged._COPYING_"))).isFalse();
  }

  @Test
  void getmerge_reportsAMissingSource_andMergesTheRest() throws IOException {
    Path dst = local.resolve("m");
    assertThat(run("fs", "getmerge", base + "/nope", base + "/top", dst.toString())).isEqualTo(1);
    assertThat(err).isEqualTo("getmerge: " + base + "/nope: No such file or directory\n");
    assertThat(Files.readAllBytes(dst)).isEqualTo(data(3, 5));
    assertThat(run("fs", "getmerge", base + "/top", local.toString())).isEqualTo(1);
    assertThat(err).isEqualTo("getmerge: " + local + ": Is a directory\n");
  }

  // ---- find ----

  @Test
  void find_printsMatchingPathsDepthFirst() {
    assertThat(run("fs", "find", base, "-name", "*.bin", "-print")).isEqualTo(0);
    assertThat(out).isEqualTo(base + "/data/a.bin\n" + base + "/data/b.bin\n" + base + "/data/sub/x.bin\n");
    assertThat(run("fs", "-find", base + "/d")).isEqualTo(0);
    assertThat(out).isEqualTo(base + "/d\n" + base + "/d/f\n" + base + "/d/sub\n" + base + "/d/sub/g\n");
    assertThat(run("fs", "find", base + "/data", base + "/d", "-iname", "[AS]*")).isEqualTo(0);
    assertThat(out).isEqualTo(base + "/data/a.bin\n" + base + "/data/sub\n" + base + "/d/sub\n");
    assertThat(run("fs", "find", base + "/nope", "-name", "x")).isEqualTo(1);
    assertThat(err).isEqualTo("find: " + base + "/nope: No such file or directory\n");
    assertThat(run("fs", "find", base, "-name", "x", "-iname", "y")).isEqualTo(2);
    assertThat(err).startsWith("Give -name or -iname, not both");
  }

  // ---- rmdir ----

  @Test
  void rmdir_deletesEmptyDirectoriesOnly() throws IOException {
    fs.createDirectory(base + "/e1");
    fs.createDirectory(base + "/e2");
    assertThat(run("fs", "rmdir", base + "/e*", base + "/d", base + "/top", base + "/nope")).isEqualTo(1);
    assertThat(err).isEqualTo("rmdir: " + base + "/d: Directory is not empty\n"
        + "rmdir: " + base + "/top: Is not a directory\n"
        + "rmdir: " + base + "/nope: No such file or directory\n");
    assertThat(fs.exists(base + "/e1")).isFalse();
    assertThat(fs.exists(base + "/e2")).isFalse();
    assertThat(read(base + "/d/f")).isEqualTo(data(1, 10));
    assertThat(run("fs", "rmdir", "--ignore-fail-on-non-empty", base + "/d")).isEqualTo(0);
    assertThat(err).isEmpty();
    assertThat(fs.exists(base + "/d/sub/g")).isTrue();
  }

  // ---- moveFromLocal ----

  @Test
  void moveFromLocal_deletesTheLocalFiles_onlyOnceStrataHoldsThem() throws IOException {
    Path one = Files.write(local.resolve("one"), data(11, 70_000));
    assertThat(run("fs", "moveFromLocal", one.toString(), base + "/one")).isEqualTo(0);
    assertThat(read(base + "/one")).isEqualTo(data(11, 70_000));
    assertThat(Files.exists(one)).isFalse();

    // The target exists: the copy fails, so the local file keeps the bytes and Strata's file is untouched.
    Path again = Files.write(local.resolve("again"), data(12, 40));
    assertThat(run("fs", "moveFromLocal", again.toString(), base + "/top")).isEqualTo(1);
    assertThat(err).isEqualTo("moveFromLocal: " + base + "/top: File exists\n");
    assertThat(Files.readAllBytes(again)).isEqualTo(data(12, 40));
    assertThat(read(base + "/top")).isEqualTo(data(3, 5));
  }

  @Test
  void moveFromLocal_ofATree_keepsWhatFailed_andTheDirectoryHoldingIt() throws IOException {
    Path tree = Files.createDirectory(local.resolve("tree"));
    Path a = Files.write(tree.resolve("a"), data(13, 300));
    Path b = Files.write(tree.resolve("b"), data(14, 400));
    fs.createDirectory(base + "/in/tree", CreateDirectoryOptions.defaults().withRecursive(true));
    write(base + "/in/tree/b", data(15, 1)); // b cannot be copied: its target exists
    assertThat(run("fs", "-moveFromLocal", tree.toString(), base + "/in")).isEqualTo(1);
    assertThat(err).isEqualTo("moveFromLocal: " + base + "/in/tree/b: File exists\n");
    assertThat(read(base + "/in/tree/a")).isEqualTo(data(13, 300));
    assertThat(Files.exists(a)).isFalse();
    assertThat(Files.readAllBytes(b)).isEqualTo(data(14, 400));
    assertThat(read(base + "/in/tree/b")).isEqualTo(data(15, 1));
    assertThat(Files.isDirectory(tree)).isTrue();

    Path whole = Files.createDirectory(local.resolve("whole"));
    Files.write(whole.resolve("x"), data(16, 20));
    assertThat(run("fs", "moveFromLocal", whole.toString(), base + "/in")).isEqualTo(0);
    assertThat(read(base + "/in/whole/x")).isEqualTo(data(16, 20));
    assertThat(Files.exists(whole)).isFalse();
  }

  // ---- setrep ----

  @Test
  void setrep_isAccepted_changesNothing_andSaysSo() throws IOException {
    assertThat(run("fs", "-setrep", "-w", "3", base + "/d", base + "/top")).isEqualTo(0);
    assertThat(out).isEqualTo("Replication 3 not stored: " + base + "/d/f\n"
        + "Replication 3 not stored: " + base + "/d/sub/g\n"
        + "Replication 3 not stored: " + base + "/top\n");
    assertThat(err).isEqualTo(AttributeCommands.SETREP_NOTE + "\n");
    assertThat(read(base + "/d/f")).isEqualTo(data(1, 10));
    assertThat(run("fs", "setrep", "0", base + "/top")).isEqualTo(2);
    assertThat(err).contains("'0' is not a replication factor (1 to 32767)");
    assertThat(run("fs", "setrep", "2", base + "/nope")).isEqualTo(1);
    assertThat(err).endsWith("setrep: " + base + "/nope: No such file or directory\n");
  }

  // ---- chmod, chown, chgrp ----

  private static int mode(String path) throws IOException {
    return fs.getStatus(path).mode();
  }

  @Test
  void chmod_octalAndSymbolic_areStored_andLsShowsThem() throws IOException {
    assertThat(mode(base + "/top")).isEqualTo(0644);
    assertThat(run("fs", "chmod", "600", base + "/top")).isEqualTo(0);
    assertThat(out).isEmpty();
    assertThat(mode(base + "/top")).isEqualTo(0600);
    assertThat(run("fs", "ls", base + "/top")).isEqualTo(0);
    assertThat(out).startsWith("-rw-------   1 alice alice          5 ");
    assertThat(run("fs", "-chmod", "-R", "750", base + "/d")).isEqualTo(0);
    for (String p : List.of("/d", "/d/f", "/d/sub", "/d/sub/g")) {
      assertThat(mode(base + p)).as(p).isEqualTo(0750);
    }
    // Symbolic with -R: each path from its own mode; X only for directories and executable files.
    fs.setAttribute(base + "/data/a.bin", io.strata.client.options.SetAttributeOptions.defaults().withMode(0744));
    assertThat(run("fs", "chmod", "-R", "go-r,a+X", base + "/data")).isEqualTo(0);
    assertThat(mode(base + "/data")).isEqualTo(0711);
    assertThat(mode(base + "/data/a.bin")).isEqualTo(0711);
    assertThat(mode(base + "/data/b.bin")).isEqualTo(0600);
    assertThat(mode(base + "/data/sub")).isEqualTo(0711);
    assertThat(mode(base + "/data/sub/x.bin")).isEqualTo(0600);
    assertThat(run("fs", "chmod", "+t", base + "/data/*.bin")).isEqualTo(0);
    assertThat(mode(base + "/data/b.bin")).isEqualTo(01600);
  }

  @Test
  void chmod_badModeIsAUsageError_andAMissingPathExits1() throws IOException {
    assertThat(run("fs", "chmod", "u+q", base + "/top")).isEqualTo(2);
    assertThat(err).contains("'u+q' is not a mode: give octal digits (755, 1777) or comma-separated clauses");
    assertThat(mode(base + "/top")).isEqualTo(0644);
    assertThat(run("fs", "chmod", "700", base + "/nope", base + "/top")).isEqualTo(1);
    assertThat(err).isEqualTo("chmod: " + base + "/nope: No such file or directory\n");
    assertThat(mode(base + "/top")).isEqualTo(0700);
  }

  @Test
  void chownAndChgrp_storeOwnerAndGroup() throws IOException {
    assertThat(fs.getStatus(base + "/top").owner()).isEqualTo("alice");
    assertThat(run("fs", "chown", "bob:staff", base + "/top")).isEqualTo(0);
    assertThat(fs.getStatus(base + "/top").owner()).isEqualTo("bob");
    assertThat(fs.getStatus(base + "/top").group()).isEqualTo("staff");
    assertThat(run("fs", "ls", base + "/top")).isEqualTo(0);
    assertThat(out).startsWith("-rw-r--r--   1 bob staff          5 ");
    assertThat(run("fs", "-chown", "-R", "carol", base + "/d")).isEqualTo(0);
    for (String p : List.of("/d", "/d/f", "/d/sub", "/d/sub/g")) {
      assertThat(fs.getStatus(base + p).owner()).as(p).isEqualTo("carol");
      assertThat(fs.getStatus(base + p).group()).as(p).isEqualTo("alice"); // OWNER alone leaves the group
    }
    assertThat(run("fs", "chown", ":ops", base + "/d/f")).isEqualTo(0);
    assertThat(fs.getStatus(base + "/d/f").owner()).isEqualTo("carol");
    assertThat(fs.getStatus(base + "/d/f").group()).isEqualTo("ops");
    assertThat(run("fs", "chgrp", "-R", "eng", base + "/data")).isEqualTo(0);
    assertThat(fs.getStatus(base + "/data/sub/x.bin").group()).isEqualTo("eng");
    assertThat(fs.getStatus(base + "/data/sub/x.bin").owner()).isEqualTo("alice");
    assertThat(fs.getStatus(base + "/top").group()).isEqualTo("staff"); // outside the tree: unchanged
    assertThat(run("fs", "chgrp", "eng", base + "/nope")).isEqualTo(1);
    assertThat(err).isEqualTo("chgrp: " + base + "/nope: No such file or directory\n");
    assertThat(run("fs", "chown", "bad name", base + "/top")).isEqualTo(2);
    assertThat(err).contains("'bad name' is not OWNER[:GROUP]");
    assertThat(run("fs", "chown", ":", base + "/top")).isEqualTo(2);
    assertThat(fs.getStatus(base + "/top").owner()).isEqualTo("bob");
  }

  // ---- ls sort orders, touchz ----

  @Test
  void ls_sortsBySizeOrTime_withinEachDirectory_andCPrintsPathsOnly() throws IOException {
    assertThat(run("fs", "ls", "-C", "-S", base + "/data")).isEqualTo(0);
    assertThat(out).isEqualTo("Found 4 items\n" + base + "/data/b.bin\n" + base + "/data/a.bin\n"
        + base + "/data/c.txt\n" + base + "/data/sub\n");
    assertThat(run("fs", "ls", "-C", "-S", "-r", base + "/data")).isEqualTo(0);
    assertThat(out.lines().skip(1).toList()).containsExactly(base + "/data/sub", base + "/data/c.txt",
        base + "/data/a.bin", base + "/data/b.bin");
    long t = fs.getStatus(base + "/data/a.bin").modificationTimeMs();
    fs.setAttribute(base + "/data/c.txt", io.strata.client.options.SetAttributeOptions.defaults()
        .withModificationTimeMs(t + 60_000));
    fs.setAttribute(base + "/data/sub/x.bin", io.strata.client.options.SetAttributeOptions.defaults()
        .withModificationTimeMs(1_000));
    fs.setAttribute(base + "/data/sub", io.strata.client.options.SetAttributeOptions.defaults()
        .withModificationTimeMs(2_000));
    fs.setAttribute(base + "/data/b.bin", io.strata.client.options.SetAttributeOptions.defaults()
        .withModificationTimeMs(3_000));
    write(base + "/data/sub/y", new byte[1]);
    fs.setAttribute(base + "/data/sub", io.strata.client.options.SetAttributeOptions.defaults()
        .withModificationTimeMs(2_000));
    assertThat(run("fs", "-ls", "-C", "-R", "-t", base + "/data")).isEqualTo(0);
    // Newest first in each directory; sub's entries right after sub.
    assertThat(out).isEqualTo(base + "/data/c.txt\n" + base + "/data/a.bin\n" + base + "/data/b.bin\n"
        + base + "/data/sub\n" + base + "/data/sub/y\n" + base + "/data/sub/x.bin\n");
  }

  @Test
  void touchz_createsEmptyFiles_andRefusesOnesWithBytes() throws IOException {
    write(base + "/empty", new byte[0]);
    assertThat(run("fs", "-touchz", base + "/new", base + "/empty", base + "/top", base + "/d")).isEqualTo(1);
    assertThat(err).isEqualTo("touchz: " + base + "/top: Not a zero-length file\n"
        + "touchz: " + base + "/d: Is a directory\n");
    assertThat(fs.getStatus(base + "/new").length()).isZero();
    assertThat(fs.getStatus(base + "/new").complete()).isTrue();
    assertThat(read(base + "/top")).isEqualTo(data(3, 5));
  }

  @Test
  void rmF_ofAPatternMatchingNothing_isQuiet_withoutFItFails() {
    assertThat(run("fs", "rm", "-f", base + "/x*")).isEqualTo(0);
    assertThat(err).isEmpty();
    assertThat(run("fs", "rm", base + "/x*")).isEqualTo(1);
    assertThat(err).isEqualTo("rm: `" + base + "/x*': No such file or directory\n");
  }

  @Test
  void localFileUris_workForPutAndGet() throws IOException {
    Path src = Files.write(local.resolve("u.bin"), data(21, 1234));
    assertThat(run("fs", "-put", src.toUri().toString(), "strata://" + base + "/u.bin")).isEqualTo(0);
    assertThat(read(base + "/u.bin")).isEqualTo(data(21, 1234));
    Path back = local.resolve("back.bin");
    assertThat(run("fs", "-get", base + "/u.bin", "file:" + back)).isEqualTo(0);
    assertThat(Files.readAllBytes(back)).isEqualTo(data(21, 1234));
    assertThat(run("fs", "put", "file://host/x", base + "/v")).isEqualTo(1);
    assertThat(err).startsWith("put: file://host/x: 'file://host/x' is not a local file URI (file:///dir/file): ");
  }
}
