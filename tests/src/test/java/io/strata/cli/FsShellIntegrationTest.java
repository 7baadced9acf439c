package io.strata.cli;

import static io.strata.cli.CliFiles.concat;
import static io.strata.cli.CliFiles.data;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.WorkerInfo;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.common.conf.StrataConf;
import io.strata.minicluster.LocalStrataCluster;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code strata fs} and {@code strata fsadmin} command against a real master and two real workers
 * in this JVM: messages, exit codes, output formats, and the bytes that go through the data path.
 *
 * <p>The tests share the cluster; each works under its own directory {@code /t-<test method>}, created
 * by {@link #setUp} with the same small tree: {@code d/f} (10 bytes), {@code d/sub/g} (1500 bytes) and
 * {@code top} (5 bytes).
 */
class FsShellIntegrationTest {
  /** Creates record the client's login name as owner and group (strata.user.login.name unset here). */
  private static final String USER = System.getProperty("user.name");
  private static final String OWNERS = USER + " " + USER;
  private static final int KB = 1024;
  private static final DateTimeFormatter LS_TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm", Locale.ROOT).withZone(ZoneOffset.UTC);
  private static final DateTimeFormatter ISO_UTC =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);

  private static LocalStrataCluster cluster;
  private static StrataConf conf;
  private static FileSystem fs;

  @TempDir
  Path local;

  /** The test's own directory in Strata. */
  private String base;
  /** The clients the CLI opened during this test's runs. */
  private final List<FileSystem> opened = new ArrayList<>();
  private byte[] outBytes;
  private String out;
  private String err;

  @BeforeAll
  static void startCluster() throws IOException {
    cluster = LocalStrataCluster.builder().workers(2).build().start();
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
    base = "/t-" + info.getTestMethod().orElseThrow().getName();
    fs.createDirectory(base + "/d/sub", CreateDirectoryOptions.defaults().withRecursive(true));
    write(base + "/d/f", data(1, 10));
    write(base + "/d/sub/g", data(2, 1500));
    write(base + "/top", data(3, 5));
  }

  // ---- helpers ----

  private static void write(String path, byte[] content) throws IOException {
    CliFiles.write(fs, path, content);
  }

  private static byte[] read(String path) throws IOException {
    return CliFiles.read(fs, path);
  }

  private int run(String... args) {
    return runWithStdin(new byte[0], args);
  }

  /**
   * Runs the command line with the real client factory (recording each client it opens), the system
   * clock and UTC as the zone {@code ls} prints times in.
   */
  private int runWithStdin(byte[] stdin, String... args) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    ByteArrayOutputStream e = new ByteArrayOutputStream();
    CliContext ctx = new CliContext(conf, new ByteArrayInputStream(stdin),
        new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8),
        Clock.systemUTC(), ZoneOffset.UTC, false, c -> {
          FileSystem client = FileSystem.create(c);
          opened.add(client);
          return client;
        });
    int code = StrataCli.run(ctx, args);
    capture(o, e);
    return code;
  }

  /** Runs through the public entry point, as {@code bin/strata} does (stdin given). */
  private int runPublic(byte[] stdin, String... args) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    ByteArrayOutputStream e = new ByteArrayOutputStream();
    int code = StrataCli.run(conf, new ByteArrayInputStream(stdin), new PrintStream(o, true, StandardCharsets.UTF_8),
        new PrintStream(e, true, StandardCharsets.UTF_8), args);
    capture(o, e);
    return code;
  }

  private void capture(ByteArrayOutputStream o, ByteArrayOutputStream e) {
    outBytes = o.toByteArray();
    out = o.toString(StandardCharsets.UTF_8);
    err = e.toString(StandardCharsets.UTF_8);
  }

  /** The files under {@code root} by path relative to it, with their bytes; directories map to null. */
  private static Map<String, byte[]> localTree(Path root) throws IOException {
    Map<String, byte[]> tree = new TreeMap<>();
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.filter(p -> !p.equals(root)).collect(Collectors.toList())) {
        tree.put(root.relativize(p).toString(), Files.isDirectory(p) ? null : Files.readAllBytes(p));
      }
    }
    return tree;
  }

  private static void assertSameTree(Path expected, Path actual) throws IOException {
    Map<String, byte[]> want = localTree(expected);
    Map<String, byte[]> got = localTree(actual);
    assertThat(got.keySet()).containsExactlyElementsOf(want.keySet());
    for (Map.Entry<String, byte[]> e : want.entrySet()) {
      if (e.getValue() == null) {
        assertThat(got.get(e.getKey())).as(e.getKey()).isNull();
      } else {
        assertThat(got.get(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
      }
    }
  }

  // ---- ls ----

  @Test
  void ls_ofMissingPath_printsNoSuchFile_andExits1() {
    String rel = base.substring(1) + "/nope/"; // relative, with a trailing slash: normalised under /
    assertThat(run("fs", "ls", rel)).isEqualTo(1);
    assertThat(err).isEqualTo("ls: " + base + "/nope: No such file or directory\n");
    assertThat(out).isEmpty();
  }

  @Test
  void ls_ofDirectory_printsFoundThenOneLinePerChild_andClosesTheClient() throws IOException {
    URIStatus f = fs.getStatus(base + "/d/f");
    URIStatus sub = fs.getStatus(base + "/d/sub");
    assertThat(run("fs", "ls", base + "/d/")).isEqualTo(0);
    assertThat(out).isEqualTo("Found 2 items\n"
        + "-rw-r--r--   1 " + OWNERS + "         10 " + LS_TIME.format(Instant.ofEpochMilli(f.modificationTimeMs()))
        + " " + base + "/d/f\n"
        + "drwxr-xr-x   - " + OWNERS + "          0 "
        + LS_TIME.format(Instant.ofEpochMilli(sub.modificationTimeMs())) + " " + base + "/d/sub\n");
    assertThat(err).isEmpty();
    assertThat(opened).hasSize(1);
    // The run closed its client: its channel to the master is shut down.
    assertThatThrownBy(() -> opened.get(0).getStatus("/")).isInstanceOf(IOException.class);
  }

  @Test
  void lsRecursive_listsTheTreeDepthFirst_withoutFoundLine() {
    assertThat(run("fs", "ls", "-R", base.substring(1) + "/d")).isEqualTo(0);
    assertThat(out.lines().map(l -> l.substring(l.lastIndexOf(' ') + 1)))
        .containsExactly(base + "/d/f", base + "/d/sub", base + "/d/sub/g");
    assertThat(out.lines().filter(l -> l.startsWith("Found"))).isEmpty();
  }

  @Test
  void ls_carriesOnAfterAFailedPath_andStillExits1() {
    assertThat(run("fs", "ls", base + "/nope", base + "/top")).isEqualTo(1);
    assertThat(err).isEqualTo("ls: " + base + "/nope: No such file or directory\n");
    assertThat(out).matches("-rw-r--r--   1 " + OWNERS + "          5 \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d "
        + base + "/top\n");
  }

  @Test
  void lsHuman_printsSizesInBinaryUnits() throws IOException {
    URIStatus g = fs.getStatus(base + "/d/sub/g");
    assertThat(run("fs", "ls", "-h", base + "/d/sub")).isEqualTo(0);
    assertThat(out).isEqualTo("Found 1 items\n-rw-r--r--   1 " + OWNERS + "      1.5 K "
        + LS_TIME.format(Instant.ofEpochMilli(g.modificationTimeMs())) + " " + base + "/d/sub/g\n");
  }

  // ---- mkdir ----

  @Test
  void mkdir_ofExistingDirectory_failsWithFileExists_unlessP() throws IOException {
    assertThat(run("fs", "mkdir", base + "/d")).isEqualTo(1);
    assertThat(err).isEqualTo("mkdir: " + base + "/d: File exists\n");
    assertThat(run("fs", "mkdir", "-p", base + "/d", base + "/x/y/z")).isEqualTo(0);
    assertThat(err).isEmpty();
    assertThat(fs.getStatus(base + "/x/y/z").directory()).isTrue();
    assertThat(fs.exists(base + "/d/f")).isTrue(); // mkdir -p of an existing directory leaves it alone
  }

  @Test
  void mkdir_withMissingParent_failsWithoutP() throws IOException {
    assertThat(run("fs", "mkdir", base + "/m/n")).isEqualTo(1);
    assertThat(err).isEqualTo("mkdir: " + base + "/m/n: No such file or directory\n");
    assertThat(fs.exists(base + "/m")).isFalse();
  }

  // ---- rm ----

  @Test
  void rm_ofDirectoryWithoutR_failsWithIsADirectory() throws IOException {
    assertThat(run("fs", "rm", base + "/d")).isEqualTo(1);
    assertThat(err).isEqualTo("rm: " + base + "/d: Is a directory\n");
    assertThat(fs.exists(base + "/d/f")).isTrue();
  }

  @Test
  void rmRf_deletesTrees_andIgnoresMissingPaths() throws IOException {
    assertThat(run("fs", "rm", "-rf", base + "/d", base + "/nope")).isEqualTo(0);
    assertThat(out).isEqualTo("Deleted " + base + "/d\n");
    assertThat(err).isEmpty();
    assertThat(fs.exists(base + "/d")).isFalse();
    assertThat(run("fs", "rm", base + "/nope")).isEqualTo(1);
    assertThat(err).isEqualTo("rm: " + base + "/nope: No such file or directory\n");
  }

  @Test
  void rmR_ofDirectoryWithFiles_removesEverythingUnderIt() throws IOException {
    assertThat(run("fs", "test", "-e", base + "/d/sub/g")).isEqualTo(0);
    assertThat(run("fs", "rm", "-r", base + "/d", base + "/top")).isEqualTo(0);
    assertThat(out).isEqualTo("Deleted " + base + "/d\nDeleted " + base + "/top\n");
    assertThat(err).isEmpty();
    assertThat(run("fs", "test", "-e", base + "/d")).isEqualTo(1);
    assertThat(run("fs", "test", "-e", base + "/d/sub/g")).isEqualTo(1);
    assertThat(run("fs", "test", "-e", base + "/top")).isEqualTo(1);
    assertThat(fs.listStatus(base)).isEmpty();
  }

  // ---- mv ----

  @Test
  void mv_intoExistingDirectory_keepsTheNameAndTheBytes() throws IOException {
    assertThat(run("fs", "mv", base + "/top", base + "/d/sub")).isEqualTo(0);
    assertThat(out + err).isEmpty();
    assertThat(fs.exists(base + "/top")).isFalse();
    assertThat(run("fs", "cat", base + "/d/sub/top")).isEqualTo(0);
    assertThat(outBytes).isEqualTo(data(3, 5));
  }

  @Test
  void mv_severalSourcesIntoADirectory_andRenameOfADirectory() throws IOException {
    assertThat(run("fs", "mv", base + "/top", base + "/d/f", base + "/d/sub")).isEqualTo(0);
    assertThat(fs.listStatus(base + "/d/sub").stream().map(URIStatus::name))
        .containsExactlyInAnyOrder("f", "g", "top");
    assertThat(run("fs", "mv", base + "/d", base + "/renamed")).isEqualTo(0);
    assertThat(fs.exists(base + "/d")).isFalse();
    assertThat(read(base + "/renamed/sub/g")).isEqualTo(data(2, 1500));
  }

  @Test
  void mv_ontoExistingFile_failsWithFileExists_andMissingSourceNamesTheSource() throws IOException {
    assertThat(run("fs", "mv", base + "/top", base + "/d/f")).isEqualTo(1);
    assertThat(err).isEqualTo("mv: " + base + "/d/f: File exists\n");
    assertThat(read(base + "/d/f")).isEqualTo(data(1, 10));
    assertThat(run("fs", "mv", base + "/nope", base + "/elsewhere")).isEqualTo(1);
    assertThat(err).isEqualTo("mv: " + base + "/nope: No such file or directory\n");
    assertThat(run("fs", "mv", base + "/top", base + "/d/f", base + "/new")).isEqualTo(1);
    assertThat(err).isEqualTo("mv: " + base + "/new: No such file or directory\n");
    assertThat(fs.exists(base + "/top")).isTrue();
  }

  // ---- test ----

  @Test
  void test_exitsWithTheAnswer_andPrintsNothing() {
    assertThat(run("fs", "test", "-d", base + "/d")).isEqualTo(0);
    assertThat(run("fs", "test", "-f", base + "/d")).isEqualTo(1);
    assertThat(run("fs", "test", "-e", base + "/d")).isEqualTo(0);
    assertThat(run("fs", "test", "-e", base + "/nope")).isEqualTo(1);
    assertThat(run("fs", "test", "-f", base + "/top")).isEqualTo(0);
    assertThat(run("fs", "test", "-d", base + "/top")).isEqualTo(1);
    assertThat(run("fs", "test", "-e", base + "/top")).isEqualTo(0);
    assertThat(run("fs", "test", "-z", base + "/top")).isEqualTo(1);
    assertThat(run("fs", "test", "-s", base + "/top")).isEqualTo(0);
    assertThat(run("fs", "test", "-s", base + "/d")).isEqualTo(1);
    assertThat(out + err).isEmpty();
    assertThat(run("fs", "test", "-e", "-d", base + "/d")).isEqualTo(2);
  }

  // ---- stat ----

  @Test
  void stat_printsKeyValueLines_orTheGivenFormat() throws IOException {
    URIStatus g = fs.getStatus(base + "/d/sub/g");
    assertThat(run("fs", "stat", base + "/d/sub/g")).isEqualTo(0);
    List<String> lines = out.lines().collect(Collectors.toList());
    assertThat(lines.subList(0, 12)).containsExactly("path=" + base + "/d/sub/g", "type=file", "length=1500",
        "block_size=" + g.blockSize(), "complete=true", "mode=644", "owner=" + USER, "group=" + USER,
        "modification_time=" + ISO_UTC.format(Instant.ofEpochMilli(g.modificationTimeMs())),
        "creation_time=" + ISO_UTC.format(Instant.ofEpochMilli(g.creationTimeMs())),
        "id=" + g.id(), "blocks=1");
    // Written ASYNC_THROUGH (the default): persisted by now or soon.
    assertThat(lines.get(12)).isIn("persistence=TO_BE_PERSISTED", "persistence=PERSISTED");
    assertThat(lines.subList(13, lines.size())).containsExactly("pinned=false", "ttl_ms=-1", "ttl_action=DELETE",
        "ufs_path=file:" + cluster.rootUfsDir().resolve(base.substring(1) + "/d/sub/g"), "mount_point=false");
    assertThat(run("fs", "stat", "%n %b", base + "/d/sub/g", base + "/top")).isEqualTo(0);
    assertThat(out).isEqualTo("g 1500\ntop 5\n");
    assertThat(run("fs", "stat", "%F %a %u:%g %Y", base + "/d")).isEqualTo(0);
    assertThat(out).isEqualTo("directory 755 " + USER + ":" + USER + " " + fs.getStatus(base + "/d").modificationTimeMs() + "\n");
  }

  @Test
  void stat_ofMultiBlockFile_countsItsBlocks() throws IOException {
    byte[] content = data(10, 300 * KB + 123);
    Path src = Files.write(local.resolve("big.bin"), content);
    assertThat(run("fs", "put", "--block-size=64KB", src.toString(), base + "/big.bin")).isEqualTo(0);
    assertThat(run("fs", "stat", base + "/big.bin")).isEqualTo(0);
    assertThat(out.lines()).contains("type=file", "length=" + content.length, "block_size=65536",
        "complete=true", "blocks=5");
    assertThat(run("fs", "stat", base + "/missing")).isEqualTo(1);
    assertThat(err).isEqualTo("stat: " + base + "/missing: No such file or directory\n");
  }

  // ---- du ----

  @Test
  void du_printsEachChildsTotal_orOneSummary() {
    assertThat(run("fs", "du", base + "/d")).isEqualTo(0);
    assertThat(out).isEqualTo("10  " + base + "/d/f\n1500  " + base + "/d/sub\n");
    assertThat(run("fs", "du", "-s", "-h", base + "/d")).isEqualTo(0);
    assertThat(out).isEqualTo("1.5 K  " + base + "/d\n");
    assertThat(run("fs", "du", base + "/top")).isEqualTo(0);
    assertThat(out).isEqualTo("5  " + base + "/top\n");
  }

  @Test
  void duSummary_isTheSumOfTheFileLengths() throws IOException {
    Path tree = local.resolve("tree");
    Files.createDirectories(tree.resolve("a/b"));
    Files.write(tree.resolve("one"), data(20, 70_000));
    Files.write(tree.resolve("a/two"), data(21, 3_333));
    Files.write(tree.resolve("a/b/three"), data(22, 1));
    assertThat(run("fs", "put", "--block-size=64KB", tree.toString(), base)).isEqualTo(0);
    long sum = 0;
    for (URIStatus s : fs.listStatus(base + "/tree", ListStatusOptions.defaults().withRecursive(true))) {
      sum += s.length();
    }
    assertThat(sum).isEqualTo(70_000 + 3_333 + 1);
    assertThat(run("fs", "du", "-s", base + "/tree", base + "/d")).isEqualTo(0);
    assertThat(out).isEqualTo(sum + "  " + base + "/tree\n" + 1510 + "  " + base + "/d\n");
    assertThat(run("fs", "du", base + "/tree")).isEqualTo(0);
    assertThat(out).isEqualTo((3_333 + 1) + "  " + base + "/tree/a\n" + 70_000 + "  " + base + "/tree/one\n");
  }

  // ---- touch ----

  @Test
  void touch_ofDirectory_failsWithIsADirectory_andExistingFileIsLeftAlone() throws IOException {
    assertThat(run("fs", "touch", base + "/d")).isEqualTo(1);
    assertThat(err).isEqualTo("touch: " + base + "/d: Is a directory\n");
    URIStatus before = fs.getStatus(base + "/top");
    assertThat(run("fs", "touch", base + "/top")).isEqualTo(0);
    URIStatus after = fs.getStatus(base + "/top");
    assertThat(after.id()).isEqualTo(before.id());
    assertThat(after.modificationTimeMs()).isEqualTo(before.modificationTimeMs());
    assertThat(read(base + "/top")).isEqualTo(data(3, 5));
  }

  @Test
  void touch_createsCompleteEmptyFiles() throws IOException {
    assertThat(run("fs", "touch", base + "/e1", base + "/d/e2")).isEqualTo(0);
    assertThat(out + err).isEmpty();
    for (String p : List.of(base + "/e1", base + "/d/e2")) {
      URIStatus s = fs.getStatus(p);
      assertThat(s.isFile()).as(p).isTrue();
      assertThat(s.complete()).as(p).isTrue();
      assertThat(s.length()).as(p).isZero();
    }
    assertThat(run("fs", "test", "-z", base + "/e1")).isEqualTo(0);
    assertThat(run("fs", "test", "-s", base + "/e1")).isEqualTo(1);
    assertThat(run("fs", "cat", base + "/e1")).isEqualTo(0);
    assertThat(outBytes).isEmpty();
    assertThat(run("fs", "touch", base + "/nope/e3")).isEqualTo(1);
    assertThat(err).isEqualTo("touch: " + base + "/nope/e3: No such file or directory\n");
    assertThat(fs.exists(base + "/nope")).isFalse();
  }

  // ---- cat, head, tail ----

  @Test
  void cat_ofDirectory_isRefused() {
    assertThat(run("fs", "cat", "/")).isEqualTo(1);
    assertThat(err).isEqualTo("cat: /: Is a directory\n");
    assertThat(run("fs", "cat", base + "/d")).isEqualTo(1);
    assertThat(err).isEqualTo("cat: " + base + "/d: Is a directory\n");
  }

  @Test
  void cat_ofSeveralFiles_concatenatesThem_andCarriesOnPastAMissingOne() {
    assertThat(run("fs", "cat", base + "/d/f", base + "/nope", base + "/top")).isEqualTo(1);
    assertThat(outBytes).isEqualTo(concat(data(1, 10), data(3, 5)));
    assertThat(err).isEqualTo("cat: " + base + "/nope: No such file or directory\n");
  }

  @Test
  void headAndTail_printTheFirstAndLastKibibyte() throws IOException {
    byte[] content = data(30, 3000);
    write(base + "/three-k", content);
    assertThat(run("fs", "head", base + "/three-k")).isEqualTo(0);
    assertThat(outBytes).isEqualTo(Arrays.copyOfRange(content, 0, KB));
    assertThat(run("fs", "tail", base + "/three-k")).isEqualTo(0);
    assertThat(outBytes).isEqualTo(Arrays.copyOfRange(content, content.length - KB, content.length));
    // A file shorter than a KiB is printed whole by both.
    assertThat(run("fs", "head", base + "/top")).isEqualTo(0);
    assertThat(outBytes).isEqualTo(data(3, 5));
    assertThat(run("fs", "tail", base + "/top")).isEqualTo(0);
    assertThat(outBytes).isEqualTo(data(3, 5));
    assertThat(run("fs", "tail", base + "/d")).isEqualTo(1);
    assertThat(err).isEqualTo("tail: " + base + "/d: Is a directory\n");
  }

  @Test
  void tail_ofMultiBlockFile_readsAcrossTheLastBlockBoundary() throws IOException {
    // 64 KiB blocks: the last KiB starts 512 bytes before the last block's start.
    byte[] content = data(31, 2 * 64 * KB + 512);
    Path src = Files.write(local.resolve("two-blocks.bin"), content);
    assertThat(run("fs", "put", "--block-size=64KB", src.toString(), base + "/two-blocks.bin")).isEqualTo(0);
    assertThat(run("fs", "tail", base + "/two-blocks.bin")).isEqualTo(0);
    assertThat(outBytes).isEqualTo(Arrays.copyOfRange(content, content.length - KB, content.length));
  }

  // ---- put, get ----

  @Test
  void put_ofMultiBlockFile_thenCatAndGet_areByteExact() throws IOException {
    byte[] content = data(40, 300 * KB + 4321);
    Path src = Files.write(local.resolve("multi.bin"), content);
    assertThat(run("fs", "put", "--block-size=64KB", src.toString(), base + "/multi.bin")).isEqualTo(0);
    assertThat(out + err).isEmpty();
    URIStatus s = fs.getStatus(base + "/multi.bin");
    assertThat(s.blockSize()).isEqualTo(64 * KB);
    assertThat(s.length()).isEqualTo(content.length);
    assertThat(s.complete()).isTrue();
    assertThat(fs.exists(base + "/multi.bin" + CopyCommands.COPYING_SUFFIX)).isFalse();

    assertThat(run("fs", "cat", base + "/multi.bin")).isEqualTo(0);
    assertThat(outBytes).isEqualTo(content);
    assertThat(err).isEmpty();

    Path back = local.resolve("back.bin");
    assertThat(run("fs", "get", base + "/multi.bin", back.toString())).isEqualTo(0);
    assertThat(out + err).isEmpty();
    assertThat(Files.readAllBytes(back)).isEqualTo(content);
    assertThat(Files.exists(local.resolve("back.bin" + CopyCommands.COPYING_SUFFIX))).isFalse();
  }

  @Test
  void put_ofLocalDirectoryTree_andGetOfItBack_copyEveryFileAndDirectory() throws IOException {
    Path tree = local.resolve("src/tree");
    Files.createDirectories(tree.resolve("sub/deeper"));
    Files.createDirectories(tree.resolve("empty"));
    Files.write(tree.resolve("a.txt"), "hello strata\n".getBytes(StandardCharsets.UTF_8));
    Files.write(tree.resolve("sub/b.bin"), data(50, 150_000)); // three 64 KiB blocks
    Files.write(tree.resolve("sub/deeper/c.bin"), data(51, 1));
    Files.write(tree.resolve("sub/deeper/zero"), new byte[0]);

    // Into an existing directory: the tree goes under it by its own name.
    assertThat(run("fs", "put", "--block-size=64KB", tree.toString(), base)).isEqualTo(0);
    assertThat(out + err).isEmpty();
    List<String> strataPaths = new ArrayList<>();
    for (URIStatus s : fs.listStatus(base + "/tree", ListStatusOptions.defaults().withRecursive(true))) {
      strataPaths.add(s.path().substring((base + "/tree/").length()) + (s.directory() ? "/" : ""));
    }
    assertThat(strataPaths).containsExactlyInAnyOrder("a.txt", "empty/", "sub/", "sub/b.bin", "sub/deeper/",
        "sub/deeper/c.bin", "sub/deeper/zero");
    assertThat(read(base + "/tree/sub/b.bin")).isEqualTo(data(50, 150_000));
    assertThat(fs.getStatus(base + "/tree/sub/b.bin").blockSize()).isEqualTo(64 * KB);

    // Into an existing local directory: likewise.
    Path back = Files.createDirectories(local.resolve("back"));
    assertThat(run("fs", "get", base + "/tree", back.toString())).isEqualTo(0);
    assertThat(out + err).isEmpty();
    assertSameTree(tree, back.resolve("tree"));

    // To a new local name: the tree is created there.
    Path renamed = local.resolve("renamed");
    assertThat(run("fs", "copyToLocal", base + "/tree", renamed.toString())).isEqualTo(0);
    assertSameTree(tree, renamed);
  }

  @Test
  void put_ofSeveralFiles_needsAnExistingDirectory() throws IOException {
    Path a = Files.write(local.resolve("a"), data(60, 100));
    Path b = Files.write(local.resolve("b"), data(61, 200));
    assertThat(run("fs", "put", a.toString(), b.toString(), base + "/nodir")).isEqualTo(1);
    assertThat(err).isEqualTo("put: " + base + "/nodir: No such file or directory\n");
    assertThat(run("fs", "put", a.toString(), b.toString(), base + "/top")).isEqualTo(1);
    assertThat(err).isEqualTo("put: " + base + "/top: Is not a directory\n");
    assertThat(run("fs", "put", a.toString(), b.toString(), base + "/d")).isEqualTo(0);
    assertThat(read(base + "/d/a")).isEqualTo(data(60, 100));
    assertThat(read(base + "/d/b")).isEqualTo(data(61, 200));
  }

  @Test
  void putDash_readsStdin() throws IOException {
    byte[] content = data(70, 200 * KB + 7);
    // Through the public entry point, as bin/strata runs it.
    assertThat(runPublic(content, "fs", "put", "--block-size=64KB", "-", base + "/from-stdin")).isEqualTo(0);
    assertThat(out + err).isEmpty();
    assertThat(fs.getStatus(base + "/from-stdin").length()).isEqualTo(content.length);
    assertThat(runPublic(new byte[0], "fs", "cat", base + "/from-stdin")).isEqualTo(0);
    assertThat(outBytes).isEqualTo(content);
    // Into a directory there is no name to give it.
    assertThat(runWithStdin(content, "fs", "put", "-", base + "/d")).isEqualTo(1);
    assertThat(err).isEqualTo("put: " + base + "/d: Is a directory\n");
    assertThat(fs.listStatus(base + "/d").stream().map(URIStatus::name)).containsExactlyInAnyOrder("f", "sub");
  }

  @Test
  void put_ontoExistingFile_isRefused_unlessF() throws IOException {
    byte[] replacement = data(80, 5000);
    Path src = Files.write(local.resolve("replacement"), replacement);
    assertThat(run("fs", "put", src.toString(), base + "/top")).isEqualTo(1);
    assertThat(err).isEqualTo("put: " + base + "/top: File exists\n");
    assertThat(read(base + "/top")).isEqualTo(data(3, 5));

    assertThat(run("fs", "put", "-f", src.toString(), base + "/top")).isEqualTo(0);
    assertThat(out + err).isEmpty();
    assertThat(read(base + "/top")).isEqualTo(replacement);
    assertThat(fs.listStatus(base).stream().map(URIStatus::name)).containsExactlyInAnyOrder("d", "top");

    // -f does not replace a directory.
    fs.createDirectory(base + "/d/replacement");
    assertThat(run("fs", "put", "-f", src.toString(), base + "/d")).isEqualTo(1);
    assertThat(err).isEqualTo("put: " + base + "/d/replacement: File exists\n");
    assertThat(fs.getStatus(base + "/d/replacement").directory()).isTrue();
  }

  @Test
  void get_refusesToOverwriteALocalFile_unlessF() throws IOException {
    Path existing = Files.writeString(local.resolve("existing"), "local content");
    assertThat(run("fs", "get", base + "/top", existing.toString())).isEqualTo(1);
    assertThat(err).isEqualTo("get: " + existing + ": File exists\n");
    assertThat(Files.readString(existing)).isEqualTo("local content");

    assertThat(run("fs", "get", "-f", base + "/top", existing.toString())).isEqualTo(0);
    assertThat(out + err).isEmpty();
    assertThat(Files.readAllBytes(existing)).isEqualTo(data(3, 5));
    try (Stream<Path> s = Files.list(local)) {
      assertThat(s.map(p -> p.getFileName().toString())).containsExactly("existing");
    }
  }

  @Test
  void aliases_reportErrorsUnderTheNameTyped_andCopyLikeTheirPairs() throws IOException {
    assertThat(run("fs", "copyToLocal", base + "/nope", local.toString())).isEqualTo(1);
    assertThat(err).isEqualTo("copyToLocal: " + base + "/nope: No such file or directory\n");
    String missing = local.resolve("no/such/local/file").toString();
    assertThat(run("fs", "put", missing, base + "/d")).isEqualTo(1);
    assertThat(err).isEqualTo("put: " + missing + ": No such file or directory\n");
    assertThat(run("fs", "copyFromLocal", missing, base + "/d")).isEqualTo(1);
    assertThat(err).isEqualTo("copyFromLocal: " + missing + ": No such file or directory\n");

    byte[] content = data(90, 777);
    Path src = Files.write(local.resolve("alias.bin"), content);
    assertThat(run("fs", "copyFromLocal", src.toString(), base + "/d")).isEqualTo(0);
    assertThat(read(base + "/d/alias.bin")).isEqualTo(content);
    Path back = Files.createDirectories(local.resolve("back"));
    assertThat(run("fs", "copyToLocal", base + "/d/alias.bin", back.toString())).isEqualTo(0);
    assertThat(Files.readAllBytes(back.resolve("alias.bin"))).isEqualTo(content);
  }

  // ---- fsadmin ----

  @Test
  void fsadminReport_printsSummaryAndBothWorkers() throws IOException {
    assertThat(run("fsadmin", "report")).isEqualTo(0);
    assertThat(err).isEmpty();
    List<String> lines = out.lines().collect(Collectors.toList());
    long capacity = 0;
    for (WorkerInfo w : fs.getWorkers()) {
      capacity += w.capacityBytes();
    }
    assertThat(lines).startsWith("Master: localhost:" + cluster.masterPort(), "Live workers: 2",
        "Lost workers: 0");
    assertThat(lines.get(3)).startsWith("Capacity: " + capacity + " (");
    assertThat(lines).contains("Files: " + fs.getClusterInfo().fileCount(),
        "Directories: " + fs.getClusterInfo().directoryCount());
    List<String> workerLines = lines.stream().filter(l -> l.startsWith("worker ")).collect(Collectors.toList());
    assertThat(workerLines).hasSize(2);
    for (int i = 0; i < 2; i++) {
      String prefix = "worker id=" + cluster.worker(i).workerId() + " address=localhost:"
          + cluster.worker(i).rpcPort() + " ";
      assertThat(workerLines).anySatisfy(l -> assertThat(l).startsWith(prefix)
          .matches("worker id=\\d+ address=\\S+ capacity=\\d+ used=\\d+ blocks=\\d+ last_heartbeat=\\d+ms"));
    }
  }

  // ---- usage ----

  @Test
  void usageErrors_exit2_andNeverOpenAClient() {
    assertThat(run("fs", "ls", "--bogus")).isEqualTo(2);
    assertThat(err).contains("Unknown option: '--bogus'");
    assertThat(run("fs", "frobnicate")).isEqualTo(2);
    assertThat(run("fs")).isEqualTo(2);
    assertThat(run()).isEqualTo(2);
    assertThat(run("fs", "put", "--block-size=lots", "a", "b")).isEqualTo(2);
    assertThat(run("fs", "test", base)).isEqualTo(2);
    assertThat(run("fs", "--help")).isEqualTo(0);
    assertThat(out).contains("copyFromLocal", "ls");
    assertThat(run("fs", "du", "--help")).isEqualTo(0);
    assertThat(out).contains("-h", "human");
    assertThat(opened).isEmpty();
  }
}
