package io.strata.server.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.InvalidArgumentException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The one form of UFS URIs: normalising, joining, parents and containment. */
class UfsManagerTest {
  private static final Path HOME = Path.of("/opt/strata");

  @Test
  void normalize_makesLocalPathsAbsoluteFileUris_andTrimsTrailingSlashes() throws Exception {
    assertThat(UfsManager.normalize("./underFSStorage", HOME)).isEqualTo("file:/opt/strata/underFSStorage");
    assertThat(UfsManager.normalize("/data/ufs/", HOME)).isEqualTo("file:/data/ufs");
    // One spelling per UFS: scheme and host without case.
    assertThat(UfsManager.normalize("FILE:/data/ufs", HOME)).isEqualTo("file:/data/ufs");
    assertThat(UfsManager.normalize("HDFS://NameNode.Example:8020/Data", HOME))
        .isEqualTo("hdfs://namenode.example:8020/Data");
    assertThat(UfsManager.normalize("hdfs://nn:8020/a/b/", HOME)).isEqualTo("hdfs://nn:8020/a/b");
    assertThat(UfsManager.normalize("hdfs://nn:8020", HOME)).isEqualTo("hdfs://nn:8020/");
  }

  @Test
  void normalize_refusesWhatIsNoUfsUri() {
    assertThatThrownBy(() -> UfsManager.normalize("", HOME)).isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(() -> UfsManager.normalize("hdfs:///a", HOME)).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("names no host");
    assertThatThrownBy(() -> UfsManager.normalize("s3a://bucket/a?x=1", HOME))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("query");
    assertThatThrownBy(() -> UfsManager.normalize("hdfs://nn/../../etc", HOME))
        .isInstanceOf(InvalidArgumentException.class);
  }

  @Test
  void parent_stepsUpOneName_andStopsAtTheRoot() {
    assertThat(UfsManager.parent("file:/data/ufs/f")).isEqualTo("file:/data/ufs");
    assertThat(UfsManager.parent("file:/f")).isEqualTo("file:/");
    assertThat(UfsManager.parent("hdfs://nn:8020/a/b")).isEqualTo("hdfs://nn:8020/a");
    assertThat(UfsManager.parent("hdfs://nn:8020/a")).isEqualTo("hdfs://nn:8020/");
    assertThat(UfsManager.parent("hdfs://nn:8020/")).isEqualTo("hdfs://nn:8020/");
  }

  @Test
  void joinAndIsUnder_agreeOnWhatLiesBelowABase() {
    assertThat(UfsManager.join("hdfs://nn/a", "/b/c")).isEqualTo("hdfs://nn/a/b/c");
    assertThat(UfsManager.join("file:/", "x")).isEqualTo("file:/x");
    assertThat(UfsManager.join("file:/d", "")).isEqualTo("file:/d");
    assertThat(UfsManager.isUnder("hdfs://nn/a/b", "hdfs://nn/a")).isTrue();
    assertThat(UfsManager.isUnder("hdfs://nn/ab", "hdfs://nn/a")).isFalse();
  }
}
