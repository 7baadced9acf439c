package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Test helper: map attempts pushing to the same partitions at once, one thread and one {@link PushClient} each
 * (attempt 1 of maps 0..n-1), every map pushing its batches {@code 0..perMap-1} to every partition in turn; waits
 * for all and fails the test if any failed. The batches come from {@code batch(map, partition, i)}.
 */
final class ConcurrentMaps {
  /** Makes map {@code map}'s push client. */
  @FunctionalInterface
  interface Pushers {
    PushClient forMap(int map);
  }

  /** The bytes of batch {@code i} of a map for a partition. */
  @FunctionalInterface
  interface Batches {
    byte[] of(int map, int partition, int i);
  }

  private ConcurrentMaps() {
  }

  /** Runs {@code maps} maps at once; returns their push clients once all finished (acknowledged by both copies). */
  static List<PushClient> push(int maps, int partitions, int perMap, Pushers pushers, Batches batches)
      throws InterruptedException {
    List<PushClient> clients = Collections.synchronizedList(new ArrayList<>());
    List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
    List<Thread> threads = new ArrayList<>();
    for (int m = 0; m < maps; m++) {
      int map = m;
      threads.add(new Thread(() -> {
        try {
          PushClient p = pushers.forMap(map);
          clients.add(p);
          for (int i = 0; i < perMap; i++) {
            for (int part = 0; part < partitions; part++) {
              byte[] b = batches.of(map, part, i);
              p.push(part, map, 1, b, 0, b.length);
            }
          }
          p.finish();
        } catch (Throwable t) {
          errors.add(t);
        }
      }, "map-" + m));
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join(120_000);
    }
    assertThat(errors).isEmpty();
    return List.copyOf(clients);
  }

  /** What every map pushed to {@code partition}, as strings (for an order-free comparison). */
  static List<String> expected(int maps, int partition, int perMap, Batches batches) {
    List<String> out = new ArrayList<>();
    for (int m = 0; m < maps; m++) {
      for (int i = 0; i < perMap; i++) {
        out.add(new String(batches.of(m, partition, i), java.nio.charset.StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  /** Attempt 1 for maps 0..n-1: the attempts readers keep. */
  static java.util.Map<Integer, Long> firstAttempts(int maps) {
    java.util.Map<Integer, Long> out = new java.util.HashMap<>();
    for (int m = 0; m < maps; m++) {
      out.put(m, 1L);
    }
    return out;
  }

}
