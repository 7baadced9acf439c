package io.strata.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.conf.StrataConf;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.net.TieredIdentity;
import io.strata.common.net.WorkerAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which worker reads a block from the under file system, which caches it passively, which copy a read
 * takes, and how the selector uses its policy keys and the client's identity.
 */
class WorkerSelectorTest {
  private static WorkerInfo worker(String host, int port) {
    return new WorkerInfo(port, new WorkerAddress(host, port), 1 << 30, 0, 0, 0, 0, List.of());
  }

  private static WorkerSelector selector(String localHost, List<WorkerInfo> workers) {
    return new WorkerSelector(StrataConf.of(Map.of(ClientKeys.HOSTNAME.name(), localHost)), () -> workers);
  }

  private static final List<WorkerInfo> REMOTE = List.of(worker("h1", 1), worker("h2", 2), worker("h3", 3),
      worker("h4", 4));

  @Test
  void ufsReadWorker_isTheLocalWorker_whenThereIsOne() throws Exception {
    List<WorkerInfo> all = new ArrayList<>(REMOTE);
    all.add(worker("me", 9));
    WorkerSelector s = selector("me", all);
    for (long block = 100; block < 120; block++) {
      assertThat(s.ufsReadWorker(block, Set.of())).isEqualTo(new WorkerAddress("me", 9));
    }
    assertThat(s.localWorker(100)).isEqualTo(new WorkerAddress("me", 9));
  }

  @Test
  void ufsReadWorker_isTheSameForEveryClient_whateverTheOrderOfTheirWorkerLists() throws Exception {
    List<WorkerInfo> shuffled = new ArrayList<>(REMOTE);
    Collections.reverse(shuffled);
    WorkerSelector a = selector("client-a", REMOTE);
    WorkerSelector b = selector("client-b", shuffled);
    Set<WorkerAddress> used = new HashSet<>();
    for (long block = 1L << 24; block < (1L << 24) + 64; block++) {
      WorkerAddress chosen = a.ufsReadWorker(block, Set.of());
      assertThat(b.ufsReadWorker(block, Set.of())).as("block " + block).isEqualTo(chosen);
      used.add(chosen);
    }
    // Consecutive blocks of one file spread over the workers rather than piling on one.
    assertThat(used).hasSize(4);
    assertThat(a.localWorker(5)).isNull();
  }

  @Test
  void ufsReadWorker_avoidsFailedWorkers() throws Exception {
    WorkerSelector s = selector("x", REMOTE);
    long block = 77;
    WorkerAddress first = s.ufsReadWorker(block, Set.of());
    WorkerAddress second = s.ufsReadWorker(block, Set.of(first));
    assertThat(second).isNotEqualTo(first);
    assertThat(REMOTE).extracting(WorkerInfo::address).contains(second);
  }

  @Test
  void ufsReadWorker_failsUnavailable_whenNoWorkerIsLeft() {
    WorkerSelector s = selector("x", List.of(worker("h1", 1)));
    assertThatThrownBy(() -> s.ufsReadWorker(3, Set.of(new WorkerAddress("h1", 1))))
        .isInstanceOf(UnavailableException.class).hasMessageContaining("block 3");
  }

  private static WorkerInfo worker(String host, int port, String node, String rack) {
    return new WorkerInfo(port, new WorkerAddress(host, port, new TieredIdentity(node, rack)), 1 << 30, 0, 0, 0, 0,
        List.of());
  }

  private static BlockLocation location(WorkerInfo w) {
    return new BlockLocation(w.id(), w.address(), "MEM");
  }

  @Test
  void nearest_takesTheSameNode_thenTheSameRack_thenTheFirstListed_skippingFailedWorkers() throws Exception {
    WorkerInfo far = worker("h1", 1, "n1", "r1");
    WorkerInfo rack = worker("h2", 2, "n2", "r2");
    WorkerInfo node = worker("h3", 3, "n3", "r3");
    WorkerSelector s = new WorkerSelector(StrataConf.of(Map.of(ClientKeys.LOCALITY_NODE.name(), "n3",
        ClientKeys.LOCALITY_RACK.name(), "r2")), () -> List.of(far, rack, node));
    List<BlockLocation> all = List.of(location(far), location(rack), location(node));
    assertThat(s.nearest(all, Set.of())).isEqualTo(node.address());
    assertThat(s.nearest(all, Set.of(node.address()))).isEqualTo(rack.address());
    assertThat(s.nearest(all, Set.of(node.address(), rack.address()))).isEqualTo(far.address());
    assertThat(s.nearest(all, Set.of(node.address(), rack.address(), far.address()))).isNull();
    assertThat(s.isLocal(node.address())).isTrue();
    assertThat(s.isLocal(rack.address())).isFalse();
  }

  @Test
  void select_usesTheWritePolicyKey_andFailsNamingItWhenThePolicyAcceptsNoWorker() throws Exception {
    WorkerSelector specific = new WorkerSelector(StrataConf.of(Map.of(
        ClientKeys.WRITE_LOCATION_POLICY.name(), "SPECIFIC_HOST", ClientKeys.LOCATION_POLICY_HOST.name(), "h3")),
        () -> REMOTE);
    assertThat(specific.select(100, Set.of())).isEqualTo(new WorkerAddress("h3", 3));
    assertThatThrownBy(() -> specific.select(100, Set.of(new WorkerAddress("h3", 3))))
        .isInstanceOf(ResourceExhaustedException.class)
        .hasMessageContaining(ClientKeys.WRITE_LOCATION_POLICY.name()).hasMessageContaining("h3");
  }

  @Test
  void ufsReadWorker_usesTheUfsReadPolicyKey() throws Exception {
    List<WorkerInfo> all = new ArrayList<>(REMOTE);
    all.add(worker("me", 9));
    WorkerSelector s = new WorkerSelector(StrataConf.of(Map.of(ClientKeys.HOSTNAME.name(), "me",
        ClientKeys.UFS_READ_LOCATION_POLICY.name(), "SpecificHost", ClientKeys.LOCATION_POLICY_HOST.name(), "h2")),
        () -> all);
    for (long block = 0; block < 8; block++) {
      assertThat(s.ufsReadWorker(block, Set.of())).isEqualTo(new WorkerAddress("h2", 2));
    }
  }

  @Test
  void aPolicyThatCannotBeBuilt_failsTheChoicesThatNeedIt_namingTheKey() throws Exception {
    WorkerSelector s = new WorkerSelector(StrataConf.of(Map.of(ClientKeys.UFS_READ_LOCATION_POLICY.name(),
        "org.example.Absent")), () -> REMOTE);
    assertThatThrownBy(() -> s.ufsReadWorker(1, Set.of())).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining(ClientKeys.UFS_READ_LOCATION_POLICY.name()).hasMessageContaining("org.example.Absent");
    // Writes and reads of cached copies do not need it.
    assertThat(REMOTE).extracting(WorkerInfo::address).contains(s.select(1, Set.of()));
    assertThat(s.nearest(List.of(location(REMOTE.get(0))), Set.of())).isEqualTo(REMOTE.get(0).address());
  }

  @Test
  void theLocalityScript_runsOnce_andItsNodeMakesAWorkerLocal(@TempDir Path dir) throws Exception {
    Path runs = dir.resolve("runs");
    WorkerSelector s = new WorkerSelector(StrataConf.of(Map.of(ClientKeys.LOCALITY_SCRIPT.name(),
        "echo run >> '" + runs + "'; echo node=h4")), () -> REMOTE);
    for (long block = 0; block < 5; block++) {
      assertThat(s.ufsReadWorker(block, Set.of())).isEqualTo(new WorkerAddress("h4", 4));
    }
    assertThat(s.localWorker(1)).isEqualTo(new WorkerAddress("h4", 4));
    assertThat(Files.readAllLines(runs)).containsExactly("run");
  }
}
