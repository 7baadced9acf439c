package io.strata.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.conf.StrataConf;
import io.strata.common.exception.UnavailableException;
import io.strata.common.net.WorkerAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which worker reads a block from the under file system, and which caches it passively. */
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
}
