package io.strata.client.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.client.ClientKeys;
import io.strata.client.WorkerInfo;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.net.TieredIdentity;
import io.strata.common.net.WorkerAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Each location policy over fixed worker lists: which worker it picks, deterministically. */
class BlockLocationPolicyTest {
  private static final long MB = 1L << 20;
  private static final TieredIdentity CLIENT = new TieredIdentity("n1", "r1");

  /** A worker at host h on node n in rack r with {@code freeMb} of 1 GiB free. */
  private static WorkerInfo worker(String host, String node, String rack, long freeMb) {
    long capacity = 1024 * MB;
    return new WorkerInfo(host.hashCode(), new WorkerAddress(host, 7000, new TieredIdentity(node, rack)), capacity,
        capacity - freeMb * MB, 0, 0, 0, List.of());
  }

  private static final WorkerInfo LOCAL = worker("a-local", "n1", "r1", 100);
  private static final WorkerInfo RACK = worker("b-rack", "n2", "r1", 500);
  private static final WorkerInfo FAR = worker("c-far", "n3", "r2", 900);
  private static final List<WorkerInfo> ALL = List.of(FAR, LOCAL, RACK);

  private static BlockLocationRequest request(long blockMb, List<WorkerInfo> workers) {
    return new BlockLocationRequest(BlockLocationRequest.UNKNOWN_BLOCK, blockMb * MB, workers, CLIENT);
  }

  private static BlockLocationPolicy policy(String name, Map<String, String> conf) throws Exception {
    return BlockLocationPolicies.create(name, StrataConf.of(conf), "test.key");
  }

  private static String host(WorkerInfo w) {
    return w.address().host();
  }

  @Test
  void localFirst_takesTheSameNode_thenTheSameRack_thenAny_amongWorkersWithRoom() throws Exception {
    BlockLocationPolicy p = policy("LOCAL_FIRST", Map.of());
    assertThat(host(p.choose(request(64, ALL)))).isEqualTo("a-local");
    // The local worker lacks room for 200 MB without evicting: the worker in the same rack.
    assertThat(host(p.choose(request(200, ALL)))).isEqualTo("b-rack");
    assertThat(host(p.choose(request(600, ALL)))).isEqualTo("c-far");
    // Nobody has room for 950 MB: the nearest takes it (it evicts).
    assertThat(host(p.choose(request(950, ALL)))).isEqualTo("a-local");
  }

  @Test
  void localFirst_takesSeveralLocalWorkersInTurn() throws Exception {
    WorkerInfo local2 = worker("a-local2", "n1", "r1", 100);
    BlockLocationPolicy p = policy("LocalFirst", Map.of());
    List<String> chosen = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      chosen.add(host(p.choose(request(1, List.of(FAR, local2, LOCAL, RACK)))));
    }
    assertThat(chosen).containsExactly("a-local", "a-local2", "a-local", "a-local2");
  }

  @Test
  void localFirstAvoidEviction_leavesALocalWorkerThatWouldEvict_forTheMostAvailable() throws Exception {
    BlockLocationPolicy p = policy("LOCAL_FIRST_AVOID_EVICTION", Map.of());
    assertThat(host(p.choose(request(64, ALL)))).isEqualTo("a-local");
    // 200 MB does not fit in the local worker's 100 MB free: the most available, not the nearest.
    assertThat(host(p.choose(request(200, ALL)))).isEqualTo("c-far");
    // The reserve counts against free space: 64 MB + 50 MB reserved no longer fit in 100 MB.
    BlockLocationPolicy reserved = policy("LocalFirstAvoidEviction",
        Map.of(ClientKeys.AVOID_EVICTION_RESERVED.name(), "50MB"));
    assertThat(host(reserved.choose(request(64, ALL)))).isEqualTo("c-far");
    assertThat(host(reserved.choose(request(40, ALL)))).isEqualTo("a-local");
    // No worker has room: the most available evicts.
    assertThat(host(p.choose(request(1000, ALL)))).isEqualTo("c-far");
  }

  @Test
  void mostAvailableFirst_takesTheWorkerWithMostFreeBytes() throws Exception {
    BlockLocationPolicy p = policy("MOST_AVAILABLE_FIRST", Map.of());
    assertThat(host(p.choose(request(1, ALL)))).isEqualTo("c-far");
    assertThat(host(p.choose(request(1, List.of(LOCAL, RACK))))).isEqualTo("b-rack");
  }

  @Test
  void roundRobin_takesEveryWorkerWithRoomInAddressOrder() throws Exception {
    BlockLocationPolicy p = policy("ROUND_ROBIN", Map.of());
    List<String> chosen = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      chosen.add(host(p.choose(request(1, ALL))));
    }
    assertThat(chosen).containsExactly("a-local", "b-rack", "c-far", "a-local");
    // Only two have room for 300 MB.
    assertThat(List.of(host(p.choose(request(300, ALL))), host(p.choose(request(300, ALL)))))
        .containsExactlyInAnyOrder("b-rack", "c-far");
  }

  @Test
  void specificHost_takesTheNamedHost_andNobodyWhenItIsAbsent() throws Exception {
    BlockLocationPolicy p = policy("SPECIFIC_HOST", Map.of(ClientKeys.LOCATION_POLICY_HOST.name(), "b-rack"));
    assertThat(host(p.choose(request(1, ALL)))).isEqualTo("b-rack");
    // A node name works too.
    BlockLocationPolicy byNode = policy("SpecificHost", Map.of(ClientKeys.LOCATION_POLICY_HOST.name(), "n3"));
    assertThat(host(byNode.choose(request(1, ALL)))).isEqualTo("c-far");
    assertThat(p.choose(request(1, List.of(LOCAL, FAR)))).isNull();
  }

  @Test
  void specificHost_withoutAHost_failsNamingTheKey() {
    assertThatThrownBy(() -> policy("SPECIFIC_HOST", Map.of()))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining(ClientKeys.LOCATION_POLICY_HOST.name()).hasMessageContaining("test.key");
  }

  @Test
  void deterministicHash_isTheSameForEveryClient_andSpreadsBlocks() throws Exception {
    List<WorkerInfo> remote = List.of(worker("h1", "m1", "", 10), worker("h2", "m2", "", 10),
        worker("h3", "m3", "", 10), worker("h4", "m4", "", 10));
    List<WorkerInfo> reversed = new ArrayList<>(remote);
    Collections.reverse(reversed);
    BlockLocationPolicy a = policy("DETERMINISTIC_HASH", Map.of());
    BlockLocationPolicy b = policy("DeterministicHash", Map.of());
    Map<String, Integer> used = new HashMap<>();
    for (long block = 1L << 24; block < (1L << 24) + 64; block++) {
      WorkerInfo chosen = a.choose(new BlockLocationRequest(block, 0, remote, CLIENT));
      assertThat(b.choose(new BlockLocationRequest(block, 0, reversed, new TieredIdentity("other", "r9"))))
          .as("block " + block).isEqualTo(chosen);
      used.merge(host(chosen), 1, Integer::sum);
    }
    assertThat(used).hasSize(4);
    // With a worker on the client's node, that worker reads every block.
    List<WorkerInfo> withLocal = new ArrayList<>(remote);
    withLocal.add(LOCAL);
    for (long block = 0; block < 16; block++) {
      assertThat(host(a.choose(new BlockLocationRequest(block, 0, withLocal, CLIENT)))).isEqualTo("a-local");
    }
  }

  @Test
  void capacityBasedRandom_drawsInProportionToFreeBytes() {
    // 100 : 500 : 900 MB free. A seeded Random makes the draw reproducible; the shares show the weighting.
    BlockLocationPolicy p = new CapacityBasedRandomPolicy(new Random(42));
    Map<String, Integer> counts = new HashMap<>();
    int draws = 15_000;
    for (int i = 0; i < draws; i++) {
      counts.merge(host(p.choose(request(1, ALL))), 1, Integer::sum);
    }
    assertThat(counts.get("a-local")).isBetween(800, 1200);
    assertThat(counts.get("b-rack")).isBetween(4500, 5500);
    assertThat(counts.get("c-far")).isBetween(8400, 9600);
    // Only workers with room for the block are drawn.
    for (int i = 0; i < 100; i++) {
      assertThat(host(p.choose(request(600, ALL)))).isEqualTo("c-far");
    }
  }

  @Test
  void capacityBasedRandom_followsItsRandom() {
    // A Random that always answers 0 lands in the first worker's share; one just under the total, in the last.
    BlockLocationPolicy first = new CapacityBasedRandomPolicy(new Random() {
      @Override
      public long nextLong() {
        return 0;
      }
    });
    assertThat(host(first.choose(request(1, ALL)))).isEqualTo("a-local");
    BlockLocationPolicy last = new CapacityBasedRandomPolicy(new Random() {
      @Override
      public long nextLong() {
        return 1500 * MB - 1;
      }
    });
    assertThat(host(last.choose(request(1, ALL)))).isEqualTo("c-far");
  }

  @Test
  void create_acceptsAPolicyClassName() throws Exception {
    assertThat(policy(MostAvailableFirstPolicy.class.getName(), Map.of()))
        .isInstanceOf(MostAvailableFirstPolicy.class);
    assertThat(policy(SpecificHostPolicy.class.getName(), Map.of(ClientKeys.LOCATION_POLICY_HOST.name(), "x")))
        .isInstanceOf(SpecificHostPolicy.class);
  }

  @Test
  void create_refusesUnknownNamesAndClassesThatAreNoPolicy_namingTheKey() {
    assertThatThrownBy(() -> policy("NEAREST_PLEASE", Map.of())).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("NEAREST_PLEASE").hasMessageContaining("test.key").hasMessageContaining("ROUND_ROBIN");
    assertThatThrownBy(() -> policy("com.example.Missing", Map.of())).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("com.example.Missing").hasMessageContaining("not on the classpath");
    assertThatThrownBy(() -> policy("java.lang.String", Map.of())).isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("does not implement");
  }
}
