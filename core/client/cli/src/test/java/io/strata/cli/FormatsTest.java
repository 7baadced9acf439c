package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.client.ClusterInfo;
import io.strata.client.URIStatus;
import io.strata.client.WorkerInfo;
import io.strata.common.net.WorkerAddress;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

class FormatsTest {
  private static final long DEC_1_2026_1950_UTC = 1_796_154_600_000L;

  private static URIStatus file(String path, long length, String owner) {
    return file(path, length, owner, URIStatus.NOT_PERSISTED);
  }

  private static URIStatus file(String path, long length, String owner, String persistence) {
    return new URIStatus(7, path, CliPaths.name(path), false, length, 64L << 20, true, DEC_1_2026_1950_UTC - 5000,
        DEC_1_2026_1950_UTC, owner, "group", 0644, 0, List.of(), persistence, false, -1, "", "", false);
  }

  private static URIStatus dir(String path) {
    return new URIStatus(3, path, CliPaths.name(path), true, 0, 0, true, DEC_1_2026_1950_UTC,
        DEC_1_2026_1950_UTC, "owner", "group", 0755, 2, List.of(), URIStatus.PERSISTED, false, -1, "",
        "hdfs://nn:8020/data" + path, true);
  }

  @Test
  void humanSize_isPlainBelowOneKiB_andOneDecimalAbove_likeHdfs() {
    assertThat(Formats.humanSize(0)).isEqualTo("0");
    assertThat(Formats.humanSize(1023)).isEqualTo("1023");
    assertThat(Formats.humanSize(1024)).isEqualTo("1 K");
    assertThat(Formats.humanSize(1536)).isEqualTo("1.5 K");
    assertThat(Formats.humanSize(3L << 29)).isEqualTo("1.5 G");
    assertThat(Formats.humanSize(64L << 20)).isEqualTo("64 M");
    assertThat(Formats.humanSize((1L << 20) - 1)).isEqualTo("1.0 M");
    assertThat(Formats.humanSize(Long.MAX_VALUE)).isEqualTo("8.0 E");
  }

  @Test
  void permissions_spellModeBits_withStickyBitAsT() {
    assertThat(Formats.permissions(true, 0755)).isEqualTo("drwxr-xr-x");
    assertThat(Formats.permissions(false, 0644)).isEqualTo("-rw-r--r--");
    assertThat(Formats.permissions(true, 01777)).isEqualTo("drwxrwxrwt");
    assertThat(Formats.permissions(false, 0)).isEqualTo("----------");
    assertThat(Formats.octalMode(0644)).isEqualTo("644");
  }

  @Test
  void lsLines_alignColumnsLikeHdfs() {
    List<String> lines = Formats.lsLines(List.of(dir("/path"), file("/path/f", 1366, "owner")),
        ZoneOffset.UTC, false);
    assertThat(lines).containsExactly(
        "drwxr-xr-x   - owner group          0 2026-12-01 19:50 /path",
        "-rw-r--r--   1 owner group       1366 2026-12-01 19:50 /path/f");
  }

  @Test
  void lsLines_widenOwnerAndLengthColumns_toTheWidestEntry() {
    List<String> lines = Formats.lsLines(List.of(file("/a", 12_345_678_901L, "bob"), file("/b", 1, "alice")),
        ZoneOffset.ofHours(1), true);
    assertThat(lines).containsExactly(
        "-rw-r--r--   1 bob   group     11.5 G 2026-12-01 20:50 /a",
        "-rw-r--r--   1 alice group          1 2026-12-01 20:50 /b");
  }

  @Test
  void statLines_areKeyValueLines_withBlockCountForFiles() {
    assertThat(Formats.statLines(file("/d/f", (64L << 20) + 1, "owner"))).containsExactly(
        "path=/d/f", "type=file", "length=67108865", "block_size=67108864", "complete=true", "mode=644",
        "owner=owner", "group=group", "modification_time=2026-12-01T19:50:00.000Z",
        "creation_time=2026-12-01T19:49:55.000Z", "id=7", "blocks=2", "persistence=NOT_PERSISTED",
        "pinned=false", "ttl_ms=-1", "ttl_action=", "ufs_path=", "mount_point=false");
    assertThat(Formats.statLines(dir("/d"))).contains("type=directory", "mode=755", "persistence=PERSISTED",
        "ufs_path=hdfs://nn:8020/data/d", "mount_point=true")
        .noneMatch(l -> l.startsWith("blocks="));
  }

  @Test
  void statLines_showPinAndTtl_whenSet() {
    URIStatus s = new URIStatus(9, "/f", "f", false, 1, 1024, true, 0, 0, "o", "g", 0644, 0, List.of(),
        URIStatus.TO_BE_PERSISTED, true, 60_000, "FREE", "file:///u/f", false);
    assertThat(Formats.statLines(s)).contains("persistence=TO_BE_PERSISTED", "pinned=true", "ttl_ms=60000",
        "ttl_action=FREE", "ufs_path=file:///u/f");
  }

  @Test
  void lsLines_withPersistence_addAColumnBeforeThePath_asWideAsTheWidestState() {
    List<String> lines = Formats.lsLines(List.of(dir("/path"), file("/path/f", 1366, "owner",
        URIStatus.TO_BE_PERSISTED)), ZoneOffset.UTC, false, true);
    assertThat(lines).containsExactly(
        "drwxr-xr-x   - owner group          0 2026-12-01 19:50 PERSISTED       /path",
        "-rw-r--r--   1 owner group       1366 2026-12-01 19:50 TO_BE_PERSISTED /path/f");
  }

  @Test
  void lsLines_withoutPersistence_keepTheHdfsLayout() {
    assertThat(Formats.lsLines(List.of(file("/f", 1, "o", URIStatus.PERSISTED)), ZoneOffset.UTC, false, false))
        .containsExactly("-rw-r--r--   1 o group          1 2026-12-01 19:50 /f");
  }

  @Test
  void mountLine_namesUriPathAndFlags() {
    assertThat(Formats.mountLine(new io.strata.client.MountInfo("/mnt/d", "hdfs://nn:8020/d", true, false,
        java.util.Map.of("k", "v")))).isEqualTo("hdfs://nn:8020/d on /mnt/d (readonly=true, shared=false)");
  }

  @Test
  void checksumLine_isMd5sumLayout() {
    assertThat(Formats.checksumLine("d41d8cd98f00b204e9800998ecf8427e", "/e"))
        .isEqualTo("d41d8cd98f00b204e9800998ecf8427e  /e");
  }

  @Test
  void formatStat_expandsHdfsSpecifiers() {
    assertThat(Formats.formatStat("%n %F %b %o %r %u:%g %a %A %y %Y %% %q", file("/d/f", 10, "owner")))
        .isEqualTo("f regular file 10 67108864 1 owner:group 644 -rw-r--r-- 2026-12-01 19:50:00 "
            + DEC_1_2026_1950_UTC + " % %q");
  }

  @Test
  void report_listsSummaryThenWorkers_withHeartbeatAge() {
    WorkerInfo live = new WorkerInfo(1, new WorkerAddress("h1", 29999), 2048, 1024, 9_000, 3, 0,
        java.util.List.of(new io.strata.client.StorageDirInfo("MEM", 0, "/m", true, 2048, 1024, 0),
            new io.strata.client.StorageDirInfo("SSD", 1, "/s", false, 4096, 0, 7)));
    WorkerInfo lost = new WorkerInfo(2, new WorkerAddress("h2", 29999), 0, 0, 0, 0, 0, java.util.List.of());
    ClusterInfo info = new ClusterInfo("m:19998", 0, 1, 1, 2048, 1024, 5, 2, 3, List.of(lost), 19999);
    assertThat(Formats.report(info, List.of(live), "m:19998", 10_000)).containsExactly(
        "Master: m:19998", "Live workers: 1", "Lost workers: 1", "Capacity: 2048 (2 K)", "Used: 1024 (1 K)",
        "Available: 1024 (1 K)", "Files: 5", "Directories: 2", "Blocks: 3",
        "worker id=1 address=h1:29999 capacity=2048 used=1024 blocks=3 last_heartbeat=1000ms",
        "  tier worker=h1:29999 tier=MEM capacity=2048 used=1024 bad_dirs=0 lost_blocks=0",
        "  tier worker=h1:29999 tier=SSD capacity=0 used=0 bad_dirs=1 lost_blocks=7",
        "dir worker=h1:29999 tier=MEM path=/m state=OK capacity=2048 used=1024",
        "dir worker=h1:29999 tier=SSD path=/s state=BAD capacity=4096 used=0 lost_blocks=7",
        "lost worker id=2 address=h2:29999");
  }
}
