package io.strata.server.ufs;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import org.apache.hadoop.fs.FileStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A local dir's statuses come from one stat each, not Hadoop's local getFileStatus: they must say what Hadoop's
 * says of the same paths (name, kind, length, modification time), and a path that is missing, or whose parent is a
 * file, has none.
 */
class LocalStatusTest {
  @TempDir
  Path dir;

  @Test
  void aLocalStatus_saysWhatHadoopsSays_andAMissingPathHasNone() throws Exception {
    Path file = Files.write(dir.resolve("part-0"), new byte[12345]);
    Files.setLastModifiedTime(file, FileTime.fromMillis(1_700_000_123_000L));
    Path sub = Files.createDirectories(dir.resolve("sub"));
    Files.setLastModifiedTime(sub, FileTime.fromMillis(1_600_000_456_000L));
    try (HadoopUnderFileSystem ufs = new HadoopUnderFileSystem(URI.create("file:///"), Map.of());
        org.apache.hadoop.fs.RawLocalFileSystem hadoop = new org.apache.hadoop.fs.RawLocalFileSystem()) {
      hadoop.initialize(URI.create("file:///"), HadoopUnderFileSystem.configuration(Map.of()));
      for (Path p : new Path[] {file, sub}) {
        UfsStatus s = ufs.getStatus(p.toUri().toString());
        FileStatus h = hadoop.getFileStatus(new org.apache.hadoop.fs.Path(p.toUri()));
        assertThat(s.name()).isEqualTo(h.getPath().getName()).isEqualTo(p.getFileName().toString());
        assertThat(s.directory()).isEqualTo(h.isDirectory());
        assertThat(s.length()).isEqualTo(h.isDirectory() ? 0 : h.getLen());
        assertThat(s.modificationTimeMs()).isEqualTo(h.getModificationTime());
      }
      assertThat(ufs.getStatus(file.toUri().toString()).length()).isEqualTo(12345);
      assertThat(ufs.getStatus(file.toUri().toString()).modificationTimeMs()).isEqualTo(1_700_000_123_000L);
      assertThat(ufs.getStatus(sub.toUri().toString()).directory()).isTrue();
      assertThat(ufs.getStatus(dir.resolve("missing").toUri().toString())).isNull();
      assertThat(ufs.getStatus(file.toUri() + "/under-a-file")).isNull();
    }
  }

  /**
   * A local dir offers no content fingerprint (no ETag): its statuses, by stat or by listing, carry "", so the length
   * and the mtime alone tell a change there. Two fingerprints differ only when both are known and not equal.
   */
  @Test
  void aLocalStatus_hasNoContentTag_andOnlyTwoKnownDifferentTagsDiffer() throws Exception {
    Path file = Files.write(dir.resolve("f"), new byte[3]);
    try (HadoopUnderFileSystem ufs = new HadoopUnderFileSystem(URI.create("file:///"), Map.of())) {
      assertThat(ufs.getStatus(file.toUri().toString()).contentTag()).isEmpty();
      assertThat(ufs.listStatus(dir.toUri().toString())).singleElement()
          .satisfies(st -> assertThat(st.contentTag()).isEmpty());
      org.apache.hadoop.fs.RawLocalFileSystem hadoop = new org.apache.hadoop.fs.RawLocalFileSystem();
      hadoop.initialize(URI.create("file:///"), HadoopUnderFileSystem.configuration(Map.of()));
      assertThat(HadoopUnderFileSystem.contentTag(hadoop.getFileStatus(new org.apache.hadoop.fs.Path(file.toUri()))))
          .isEmpty();
      hadoop.close();
    }
    assertThat(UfsStatus.contentTagsDiffer("\"v1\"", "\"v2\"")).isTrue();
    assertThat(UfsStatus.contentTagsDiffer("\"v1\"", "\"v1\"")).isFalse();
    assertThat(UfsStatus.contentTagsDiffer("", "\"v2\"")).as("recorded none: length and mtime decide").isFalse();
    assertThat(UfsStatus.contentTagsDiffer("\"v1\"", "")).as("the UFS offers none now").isFalse();
    assertThat(UfsStatus.contentTagsDiffer(null, "\"v2\"")).isFalse();
    assertThat(new UfsStatus("f", false, 1, 2, 0, "", "", null).contentTag()).isEmpty();
  }
}
