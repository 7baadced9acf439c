package io.strata.common.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.UnavailableException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The leader lookup runs with no lock held and once for all callers waiting on it: against a configured
 * master that accepts connections and never answers (a hung process), two callers of {@link
 * MasterConnection#channel} cause one Ping (one connection to it), {@link MasterConnection#describe} answers
 * meanwhile, and both callers get the lookup's UNAVAILABLE.
 */
class MasterConnectionTest {
  @Test
  void concurrentCallers_shareOneLeaderLookup_andDescribeDoesNotWaitForIt() throws Exception {
    try (ServerSocket hung = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
      AtomicInteger accepted = new AtomicInteger();
      List<Socket> held = new CopyOnWriteArrayList<>();
      Thread acceptor = new Thread(() -> {
        try {
          while (true) {
            held.add(hung.accept());
            accepted.incrementAndGet();
          }
        } catch (java.io.IOException closed) {
          // the test is over
        }
      });
      acceptor.setDaemon(true);
      acceptor.start();
      StrataConf conf = StrataConf.of(Map.of(CommonKeys.MASTER_RPC_ADDRESSES.name(), "localhost:" + hung.getLocalPort()));
      ExecutorService callers = Executors.newFixedThreadPool(2);
      try (MasterConnection c = new MasterConnection(conf)) {
        Future<?> first = callers.submit(() -> c.channel());
        // The first caller's Ping reached the hung master.
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> accepted.get() > 0);
        assertThat(accepted.get()).isEqualTo(1);
        Future<?> second = callers.submit(() -> c.channel());
        // The lookup (a 2 s Ping deadline) is in progress: describe needs no lock it holds.
        assertThat(CompletableFuture.supplyAsync(c::describe).get(1, TimeUnit.SECONDS))
            .isEqualTo("localhost:" + hung.getLocalPort());
        for (Future<?> f : List.of(first, second)) {
          try {
            f.get(20, TimeUnit.SECONDS);
            throw new AssertionError("a lookup with no master answering succeeded");
          } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(UnavailableException.class);
          }
        }
        assertThat(accepted.get()).as("one lookup for both callers").isEqualTo(1);
      } finally {
        callers.shutdownNow();
        for (Socket s : held) {
          s.close();
        }
      }
    }
  }
}
