package io.strata.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.FailedPreconditionException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cluster id a worker keeps with its blocks: read from its dirs, recorded in those without one, never mixed. */
class ClusterIdFilesTest {
  @TempDir
  Path tmp;

  @Test
  void aNewWorker_knowsNoCluster_andRecordsTheOneItJoins_inEveryDir() throws Exception {
    Path a = Files.createDirectories(tmp.resolve("a"));
    Path b = Files.createDirectories(tmp.resolve("b"));
    ClusterIdFiles ids = new ClusterIdFiles(() -> List.of(a, b));
    assertThat(ids.known()).isEmpty();
    ids.joined("c-1");
    assertThat(Files.readString(a.resolve(ClusterIdFiles.FILE)).trim()).isEqualTo("c-1");
    assertThat(Files.readString(b.resolve(ClusterIdFiles.FILE)).trim()).isEqualTo("c-1");
    assertThat(ids.known()).isEqualTo("c-1");
    assertThat(Files.exists(a.resolve(ClusterIdFiles.FILE + ".tmp"))).isFalse();
  }

  @Test
  void aDirThatLostItsId_takesTheClustersAgain_andAnExistingIdIsNeverOverwritten() throws Exception {
    Path a = Files.createDirectories(tmp.resolve("a"));
    Path mem = Files.createDirectories(tmp.resolve("mem")); // a memory tier after a reboot: empty
    Files.writeString(a.resolve(ClusterIdFiles.FILE), "c-1\n");
    ClusterIdFiles ids = new ClusterIdFiles(() -> List.of(a, mem));
    assertThat(ids.known()).isEqualTo("c-1");
    ids.joined("c-1");
    assertThat(Files.readString(mem.resolve(ClusterIdFiles.FILE)).trim()).isEqualTo("c-1");
    ids.joined("c-2"); // never happens (the master refuses first); still, the blocks' cluster stays named
    assertThat(Files.readString(a.resolve(ClusterIdFiles.FILE)).trim()).isEqualTo("c-1");
  }

  @Test
  void dirsOfDifferentClusters_areRefused_namingBoth() throws Exception {
    Path a = Files.createDirectories(tmp.resolve("a"));
    Path b = Files.createDirectories(tmp.resolve("b"));
    Files.writeString(a.resolve(ClusterIdFiles.FILE), "c-1\n");
    Files.writeString(b.resolve(ClusterIdFiles.FILE), "c-2\n");
    ClusterIdFiles ids = new ClusterIdFiles(() -> List.of(a, b));
    assertThatThrownBy(ids::known).isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("c-1=" + a).hasMessageContaining("c-2=" + b)
        .hasMessageContaining("different clusters");
  }
}
