package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.URIStatus;
import io.strata.client.options.ReadType;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The UFS and cache commands against an in-memory FileSystem: what they ask for, print and exit with. */
class UfsCommandsTest {
  private final FakeFileSystem fs = new FakeFileSystem();
  private String out;
  private String err;

  private CliContext context(ByteArrayOutputStream o, ByteArrayOutputStream e) {
    return new CliContext(StrataConf.defaults(), new ByteArrayInputStream(new byte[0]),
        new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8),
        Clock.fixed(Instant.EPOCH, ZoneOffset.UTC), ZoneOffset.UTC, false, conf -> fs);
  }

  private int run(String... args) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    ByteArrayOutputStream e = new ByteArrayOutputStream();
    int code = StrataCli.run(context(o, e), args);
    out = o.toString(StandardCharsets.UTF_8);
    err = e.toString(StandardCharsets.UTF_8);
    return code;
  }

  /** The fs subcommand object picocli filled in for {@code args}, without running it. */
  private <T> T parsed(String... args) {
    CommandLine cl = FsCommand.commandLine(context(new ByteArrayOutputStream(), new ByteArrayOutputStream()));
    CommandLine.ParseResult r = cl.parseArgs(args);
    return r.subcommand().commandSpec().commandLine().getCommand();
  }

  @Test
  void mount_passesFlagsAndOptions_andPrintsMounted() {
    assertThat(run("fs", "mount", "--readonly", "--option", "fs.s3a.access.key=AK", "--option", "b=2",
        "/mnt/s3/", "s3a://bucket/dir")).isEqualTo(0);
    assertThat(fs.calls).containsExactly(
        "mount /mnt/s3 s3a://bucket/dir readOnly=true shared=false properties={b=2, fs.s3a.access.key=AK}");
    assertThat(out).isEqualTo("Mounted s3a://bucket/dir at /mnt/s3\n");
    assertThat(err).isEmpty();
  }

  @Test
  void mount_withoutArguments_printsTheTable_oneLinePerMount() {
    fs.mounts.add(new io.strata.client.MountInfo("/", "file:///data", false, false, Map.of()));
    fs.mounts.add(new io.strata.client.MountInfo("/h", "hdfs://nn:8020/x", true, true, Map.of()));
    assertThat(run("fs", "mount")).isEqualTo(0);
    assertThat(out).isEqualTo("file:///data on / (readonly=false, shared=false)\n"
        + "hdfs://nn:8020/x on /h (readonly=true, shared=true)\n");
  }

  @Test
  void mount_withOnlyAPath_isAUsageError() {
    assertThat(run("fs", "mount", "/m")).isEqualTo(2);
    assertThat(err).contains("UFS_URI");
    assertThat(fs.calls).isEmpty();
  }

  @Test
  void unmount_ofNoMount_failsForThatPath_andGoesOn() {
    fs.mounts.add(new io.strata.client.MountInfo("/b", "file:///b", false, false, Map.of()));
    assertThat(run("fs", "unmount", "/a", "/b")).isEqualTo(1);
    assertThat(out).isEqualTo("Unmounted /b\n");
    assertThat(err).startsWith("unmount: /a: ");
  }

  @Test
  void loadMetadata_forcesASyncOfTheDirectoryAndItsEntries() {
    fs.add(FakeFileSystem.dir("/d")).add(FakeFileSystem.file("/d/f", URIStatus.PERSISTED));
    assertThat(run("fs", "loadMetadata", "-R", "/d")).isEqualTo(0);
    assertThat(fs.calls).containsExactly("getStatus /d sync=OptionalLong[0]",
        "listStatus /d recursive=true sync=OptionalLong[0]");
  }

  @Test
  void persist_ofADirectory_persistsEachFileUnderIt() {
    fs.add(FakeFileSystem.dir("/d")).add(FakeFileSystem.dir("/d/e"))
        .add(FakeFileSystem.file("/d/e/g", URIStatus.NOT_PERSISTED))
        .add(FakeFileSystem.file("/d/f", URIStatus.TO_BE_PERSISTED));
    assertThat(run("fs", "persist", "--timeout", "30s", "/d")).isEqualTo(0);
    assertThat(fs.calls).contains("persist /d/e/g timeout=PT30S", "persist /d/f timeout=PT30S");
    assertThat(out).isEqualTo("Persisted /d/e/g\nPersisted /d/f\n");
  }

  @Test
  void free_printsTheCounts() {
    fs.add(FakeFileSystem.dir("/d"));
    assertThat(run("fs", "free", "-R", "-f", "/d")).isEqualTo(0);
    assertThat(fs.calls).containsExactly("free /d recursive=true force=true");
    assertThat(out).isEqualTo("Freed /d (2 files, 5 blocks)\n");
  }

  @Test
  void free_ofAMissingPath_saysNoSuchFile() {
    assertThat(run("fs", "free", "/nope")).isEqualTo(1);
    assertThat(err).isEqualTo("free: /nope: No such file or directory\n");
  }

  @Test
  void pinAndUnpin_setOnlyThePinnedAttribute() {
    fs.add(FakeFileSystem.file("/f", URIStatus.PERSISTED));
    assertThat(run("fs", "pin", "/f")).isEqualTo(0);
    assertThat(run("fs", "unpin", "/f")).isEqualTo(0);
    assertThat(fs.calls).containsExactly("setAttribute /f pinned=true ttlMs=OptionalLong.empty ttlAction=null",
        "setAttribute /f pinned=false ttlMs=OptionalLong.empty ttlAction=null");
    assertThat(out).isEqualTo("Unpinned /f\n");
  }

  @Test
  void setTtl_takesADuration_andDefaultsToDelete() {
    fs.add(FakeFileSystem.file("/f", URIStatus.PERSISTED));
    assertThat(run("fs", "setTtl", "/f", "5min")).isEqualTo(0);
    assertThat(out).isEqualTo("TTL of /f set to 300000 ms (action DELETE)\n");
    assertThat(run("fs", "setTtl", "--action", "free", "/f", "1500")).isEqualTo(0);
    assertThat(fs.calls).containsExactly(
        "setAttribute /f pinned=null ttlMs=OptionalLong[300000] ttlAction=DELETE",
        "setAttribute /f pinned=null ttlMs=OptionalLong[1500] ttlAction=FREE");
  }

  @Test
  void setTtl_withABadDurationOrAction_isAUsageError() {
    fs.add(FakeFileSystem.file("/f", URIStatus.PERSISTED));
    assertThat(run("fs", "setTtl", "/f", "soon")).isEqualTo(2);
    assertThat(err).contains("soon");
    assertThat(run("fs", "setTtl", "--action", "EVICT", "/f", "10s")).isEqualTo(2);
    assertThat(err).contains("FREE, DELETE");
    assertThat(fs.calls).isEmpty();
  }

  @Test
  void unsetTtl_setsTtlMinusOne() {
    fs.add(FakeFileSystem.file("/f", URIStatus.PERSISTED));
    assertThat(run("fs", "unsetTtl", "/f")).isEqualTo(0);
    assertThat(fs.calls).containsExactly("setAttribute /f pinned=null ttlMs=OptionalLong[-1] ttlAction=null");
    assertThat(out).isEqualTo("TTL of /f removed\n");
  }

  @Test
  void checksum_printsMd5sumLines_andRefusesDirectories() {
    fs.add(FakeFileSystem.file("/f", URIStatus.PERSISTED)).add(FakeFileSystem.dir("/d"));
    fs.checksums.put("/f", "0123456789abcdef0123456789abcdef");
    assertThat(run("fs", "checksum", "/f", "/d")).isEqualTo(1);
    assertThat(out).isEqualTo("0123456789abcdef0123456789abcdef  /f\n");
    assertThat(err).isEqualTo("checksum: /d: Is a directory\n");
  }

  @Test
  void load_ofADirectory_loadsEveryFile() {
    fs.add(FakeFileSystem.dir("/d")).add(FakeFileSystem.file("/d/a", URIStatus.PERSISTED))
        .add(FakeFileSystem.file("/d/b", URIStatus.PERSISTED));
    assertThat(run("fs", "load", "/d")).isEqualTo(0);
    assertThat(fs.calls).contains("load /d/a", "load /d/b");
    assertThat(out).isEqualTo("Loaded /d/a\nLoaded /d/b\n");
  }

  @Test
  void stat_printsThePersistenceState() {
    fs.add(FakeFileSystem.file("/f", URIStatus.TO_BE_PERSISTED));
    assertThat(run("fs", "stat", "/f")).isEqualTo(0);
    assertThat(out.lines()).contains("persistence=TO_BE_PERSISTED", "pinned=false", "ttl_ms=-1");
  }

  @Test
  void lsDashL_addsThePersistenceColumn_plainLsDoesNot() {
    fs.add(FakeFileSystem.dir("/d")).add(FakeFileSystem.file("/d/f", URIStatus.PERSISTED));
    assertThat(run("fs", "ls", "-l", "/d")).isEqualTo(0);
    assertThat(out.lines()).containsExactly("Found 1 items",
        "-rw-r--r--   1 o g         10 1970-01-01 00:00 PERSISTED /d/f");
    assertThat(run("fs", "ls", "/d")).isEqualTo(0);
    assertThat(out.lines()).containsExactly("Found 1 items",
        "-rw-r--r--   1 o g         10 1970-01-01 00:00 /d/f");
  }

  @Test
  void writeType_isParsedCaseInsensitively_onPutAndMkdir() {
    CopyCommands.Put put = parsed("put", "--write-type=cache_through", "a", "/b");
    assertThat(put.writeType).isEqualTo(WriteType.CACHE_THROUGH);
    CopyCommands.Put alias = parsed("copyFromLocal", "--write-type", "THROUGH", "a", "/b");
    assertThat(alias.writeType).isEqualTo(WriteType.THROUGH);
    CopyCommands.Put unset = parsed("put", "a", "/b");
    assertThat(unset.writeType).isNull();
    NamespaceCommands.Mkdir mkdir = parsed("mkdir", "--write-type=MUST_CACHE", "/d");
    assertThat(mkdir.writeType).isEqualTo(WriteType.MUST_CACHE);
  }

  @Test
  void mkdir_passesTheWriteType() {
    assertThat(run("fs", "mkdir", "--write-type=THROUGH", "/d")).isEqualTo(0);
    assertThat(fs.calls).containsExactly("createDirectory /d writeType=THROUGH");
  }

  @Test
  void readType_isParsed_onEveryReadingCommand() {
    ReadCommands.Cat cat = parsed("cat", "--read-type=no_cache", "/f");
    assertThat(cat.read.readType).isEqualTo(ReadType.NO_CACHE);
    ReadCommands.Head head = parsed("head", "--read-type", "CACHE_PROMOTE", "/f");
    assertThat(head.read.readType).isEqualTo(ReadType.CACHE_PROMOTE);
    ReadCommands.Tail tail = parsed("tail", "/f");
    assertThat(tail.read.readType).isNull();
    CopyCommands.Get get = parsed("copyToLocal", "--read-type=CACHE", "/f", "x");
    assertThat(get.read.readType).isEqualTo(ReadType.CACHE);
  }

  @Test
  void badWriteType_isAUsageError_namingTheValidValues() {
    assertThat(run("fs", "put", "--write-type=SOMETIMES", "a", "/b")).isEqualTo(2);
    assertThat(err).contains("'SOMETIMES' is not a write type: use one of MUST_CACHE, CACHE_THROUGH, THROUGH, "
        + "ASYNC_THROUGH");
    assertThat(fs.calls).isEmpty();
  }

  @Test
  void badReadType_isAUsageError_namingTheValidValues() {
    assertThat(run("fs", "cat", "--read-type=FAST", "/f")).isEqualTo(2);
    assertThat(err).contains("'FAST' is not a read type: use one of NO_CACHE, CACHE, CACHE_PROMOTE");
    assertThat(run("fs", "get", "--read-type=", "/f", "x")).isEqualTo(2);
    assertThat(err).contains("is not a read type");
  }
}
