package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.strata.client.ClientKeys;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.client.options.SetAttributeOptions;
import io.strata.client.options.WriteType;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.minicluster.LocalStrataCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Owner, group, mode and times through setAttribute on a real master and worker: each set and read back by
 * getStatus and by listStatus, recursive over a tree (and not beyond it), kept across a master restart (journal
 * replay and checkpoint), bad values refused with INVALID_ARGUMENT naming them (changing nothing), a missing path
 * NOT_FOUND; and creates record the client's user name as owner and group.
 */
class SetAttributeIntegrationTest {
  @TempDir
  Path tmp;
  private LocalStrataCluster cluster;
  private FileSystem fs;

  @BeforeEach
  void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1).baseDir(tmp.resolve("cluster")).build().start();
    fs = cluster.client();
  }

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private void write(String path) throws IOException {
    try (FileOutStream out = fs.createFile(path,
        CreateFileOptions.defaults().withRecursive(true).withWriteType(WriteType.MUST_CACHE))) {
      out.write(new byte[] {1, 2, 3});
    }
  }

  /** The listing of {@code dir}'s children by path. */
  private Map<String, URIStatus> listing(String dir, boolean recursive) throws IOException {
    Map<String, URIStatus> out = new TreeMap<>();
    for (URIStatus s : fs.listStatus(dir, ListStatusOptions.defaults().withRecursive(recursive))) {
      out.put(s.path(), s);
    }
    return out;
  }

  private static List<Object> attributes(URIStatus s) {
    return List.of(s.owner(), s.group(), s.mode(), s.modificationTimeMs(), s.accessTimeMs());
  }

  @Test
  void creates_recordTheClientsUserName_asOwnerAndGroup_alsoOfTheParentsTheyMake() throws Exception {
    String me = System.getProperty("user.name");
    write("/made/by/me");
    fs.createDirectory("/dir", CreateDirectoryOptions.defaults());
    for (String p : List.of("/made", "/made/by", "/made/by/me", "/dir")) {
      assertThat(fs.getStatus(p).owner()).as(p).isEqualTo(me);
      assertThat(fs.getStatus(p).group()).as(p).isEqualTo(me);
    }
    // Access time starts at the creation time.
    URIStatus f = fs.getStatus("/made/by/me");
    assertThat(f.accessTimeMs()).isEqualTo(f.creationTimeMs()).isPositive();

    try (FileSystem other = FileSystem.create(cluster.clientConf().with(ClientKeys.LOGIN_NAME, "etl"))) {
      try (FileOutStream out = other.createFile("/dir/etl-file")) {
        out.write(1);
      }
      other.createDirectory("/dir/etl-dir", CreateDirectoryOptions.defaults());
    }
    assertThat(fs.getStatus("/dir/etl-file").owner()).isEqualTo("etl");
    assertThat(fs.getStatus("/dir/etl-dir").group()).isEqualTo("etl");
    assertThat(fs.getStatus("/dir").owner()).isEqualTo(me);
  }

  @Test
  void eachAttribute_isSet_andReadBackByGetStatusAndListStatus() throws Exception {
    write("/a/f");
    URIStatus before = fs.getStatus("/a/f");

    URIStatus owned = fs.setAttribute("/a/f", SetAttributeOptions.defaults().withOwner("alice"));
    assertThat(owned.owner()).isEqualTo("alice");
    assertThat(owned.group()).isEqualTo(before.group());
    assertThat(fs.setAttribute("/a/f", SetAttributeOptions.defaults().withGroup("analysts")).group())
        .isEqualTo("analysts");
    assertThat(fs.setAttribute("/a/f", SetAttributeOptions.defaults().withMode(04751)).mode()).isEqualTo(04751);
    fs.setAttribute("/a/f", SetAttributeOptions.defaults().withModificationTimeMs(1_000_000L));
    fs.setAttribute("/a/f", SetAttributeOptions.defaults().withAccessTimeMs(2_000_000L));

    List<Object> expected = List.of("alice", "analysts", 04751, 1_000_000L, 2_000_000L);
    assertThat(attributes(fs.getStatus("/a/f"))).isEqualTo(expected);
    assertThat(attributes(listing("/a", false).get("/a/f"))).isEqualTo(expected);
    URIStatus after = fs.getStatus("/a/f");
    assertThat(after.length()).isEqualTo(before.length());
    assertThat(after.creationTimeMs()).isEqualTo(before.creationTimeMs());
    assertThat(after.id()).isEqualTo(before.id());

    // -1 leaves a time unchanged (Hadoop's setTimes); one call may set several attributes.
    URIStatus both = fs.setAttribute("/a/f", SetAttributeOptions.defaults().withModificationTimeMs(-1)
        .withAccessTimeMs(3_000_000L).withMode(0600).withOwner("bob"));
    assertThat(attributes(both)).isEqualTo(List.of("bob", "analysts", 0600, 1_000_000L, 3_000_000L));

    // A directory's own attributes.
    URIStatus dir = fs.setAttribute("/a", SetAttributeOptions.defaults().withMode(0700).withGroup("g")
        .withModificationTimeMs(5_000L));
    assertThat(List.of(dir.mode(), dir.group(), dir.modificationTimeMs())).containsExactly(0700, "g", 5_000L);
    assertThat(fs.getStatus("/a/f").mode()).as("not recursive: the child keeps its mode").isEqualTo(0600);
  }

  @Test
  void recursive_appliesToTheDirectoryAndEverythingUnderIt_andNothingElse() throws Exception {
    write("/t/f1");
    write("/t/sub/f2");
    write("/t/sub/deeper/f3");
    write("/other/f4");
    fs.createDirectory("/t/empty", CreateDirectoryOptions.defaults());
    URIStatus outsideBefore = fs.getStatus("/other/f4");

    fs.setAttribute("/t", SetAttributeOptions.defaults().withRecursive(true).withOwner("hive").withGroup("hadoop")
        .withMode(0750).withAccessTimeMs(7_000L));

    Map<String, URIStatus> tree = listing("/t", true);
    assertThat(tree.keySet()).containsExactly("/t/empty", "/t/f1", "/t/sub", "/t/sub/deeper", "/t/sub/deeper/f3",
        "/t/sub/f2");
    tree.put("/t", fs.getStatus("/t"));
    for (URIStatus s : tree.values()) {
      assertThat(List.of(s.owner(), s.group(), s.mode(), s.accessTimeMs())).as(s.path())
          .containsExactly("hive", "hadoop", 0750, 7_000L);
    }
    assertThat(fs.getStatus("/other/f4")).isEqualTo(outsideBefore);
    assertThat(fs.getStatus("/").owner()).isNotEqualTo("hive");

    // Recursive on a file is the file alone.
    assertThat(fs.setAttribute("/t/f1", SetAttributeOptions.defaults().withRecursive(true).withMode(0400)).mode())
        .isEqualTo(0400);
    assertThat(fs.getStatus("/t/sub/f2").mode()).isEqualTo(0750);
  }

  @Test
  void attributes_surviveAMasterRestart_fromTheJournal_andFromACheckpoint() throws Exception {
    write("/r/d/f");
    write("/r/g");
    fs.setAttribute("/r/d", SetAttributeOptions.defaults().withRecursive(true).withOwner("u1").withMode(0711));
    fs.setAttribute("/r/g", SetAttributeOptions.defaults().withGroup("grp").withModificationTimeMs(123_456L)
        .withAccessTimeMs(654_321L));
    Map<String, URIStatus> before = listing("/r", true);
    assertThat(before.get("/r/d/f").owner()).isEqualTo("u1");

    cluster.restartMaster(); // replays the journal
    await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> fs.exists("/r"));
    assertThat(withoutBlocks(listing("/r", true))).isEqualTo(withoutBlocks(before));

    cluster.master().fileSystemMaster().checkpoint();
    cluster.restartMaster(); // loads the checkpoint
    await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> fs.exists("/r"));
    Map<String, URIStatus> after = listing("/r", true);
    assertThat(withoutBlocks(after)).isEqualTo(withoutBlocks(before));
    assertThat(attributes(after.get("/r/g"))).isEqualTo(List.of(fs.getStatus("/r/g").owner(), "grp",
        before.get("/r/g").mode(), 123_456L, 654_321L));
  }

  /** The attributes a restart keeps (a listing carries no blocks anyway; kept explicit). */
  private static Map<String, List<Object>> withoutBlocks(Map<String, URIStatus> listing) {
    Map<String, List<Object>> out = new TreeMap<>();
    listing.forEach((p, s) -> out.put(p, List.of(s.id(), s.owner(), s.group(), s.mode(), s.creationTimeMs(),
        s.modificationTimeMs(), s.accessTimeMs(), s.length())));
    return out;
  }

  @Test
  void badValues_areRefusedWithInvalidArgument_namingThem_andChangeNothing() throws Exception {
    write("/b/f");
    URIStatus before = fs.getStatus("/b/f");
    assertThatThrownBy(() -> fs.setAttribute("/b/f", SetAttributeOptions.defaults().withMode(010000)))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("mode 4096 (octal 10000)").hasMessageContaining("/b/f")
        .hasMessageContaining("0 to 07777");
    assertThatThrownBy(() -> fs.setAttribute("/b/f", SetAttributeOptions.defaults().withMode(-1)))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("mode -1");
    assertThatThrownBy(() -> fs.setAttribute("/b/f", SetAttributeOptions.defaults().withOwner("")))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("empty owner");
    assertThatThrownBy(() -> fs.setAttribute("/b/f", SetAttributeOptions.defaults().withGroup("a\nb")))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("control character");
    assertThatThrownBy(() -> fs.setAttribute("/b/f", SetAttributeOptions.defaults().withAccessTimeMs(-2)))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("access time -2");
    // A bad value beside good ones: nothing of the call is applied.
    assertThatThrownBy(() -> fs.setAttribute("/b/f", SetAttributeOptions.defaults().withOwner("x")
        .withMode(077777))).isInstanceOf(InvalidArgumentException.class);
    assertThat(fs.getStatus("/b/f")).isEqualTo(before);
  }

  @Test
  void aMissingPath_isNotFound() throws Exception {
    fs.createDirectory("/m", CreateDirectoryOptions.defaults());
    assertThatThrownBy(() -> fs.setAttribute("/m/nope", SetAttributeOptions.defaults().withOwner("x")))
        .isInstanceOf(NotFoundException.class).hasMessageContaining("/m/nope");
    assertThatThrownBy(() -> fs.setAttribute("/m/nope/deeper", SetAttributeOptions.defaults().withMode(0700)
        .withRecursive(true))).isInstanceOf(NotFoundException.class);
    assertThat(listing("/m", true)).isEmpty();
  }
}
