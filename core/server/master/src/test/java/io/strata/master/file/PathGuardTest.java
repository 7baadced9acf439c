package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.path.StrataPath;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Which changes wait for a held one: those of the same path, a path under it or above it; never unrelated ones. */
class PathGuardTest {
  private static StrataPath p(String s) throws Exception {
    return StrataPath.of(s);
  }

  @Test
  void relatedPathsWait_unrelatedOnesDoNot() throws Exception {
    PathGuard guard = new PathGuard();
    try (PathGuard.Held ab = guard.hold("deleting /a/b", p("/a/b"));
        PathGuard.Held ac = guard.hold("renaming /a/c to /d", p("/a/c"), p("/d")); // beside it: held at once
        PathGuard.Held abc = guard.hold("deleting /a/bc", p("/a/bc"))) {
      assertThat(guard.size()).isEqualTo(3);
    }
    for (String related : new String[] {"/a/b", "/a", "/a/b/x"}) {
      PathGuard.Held ab = guard.hold("deleting /a/b", p("/a/b"));
      CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> {
        try (PathGuard.Held h = guard.hold("renaming /elsewhere to " + related, p("/elsewhere"), p(related))) {
          assertThat(guard.size()).isEqualTo(1);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
          .until(() -> guard.waiting() == 1 || waiting.isDone());
      assertThat(waiting).as(related + " waits while /a/b is held").isNotDone();
      ab.close();
      waiting.get(10, TimeUnit.SECONDS);
    }
    assertThat(guard.size()).isZero();
  }

  /**
   * First come, first served among related changes: while a change of /dir waits for one under it, later changes
   * under /dir wait behind it (and tryHold gives way), so a stream of them cannot keep it waiting; unrelated ones go.
   */
  @Test
  void aWaitingChangeOfADirectory_isNotOvertakenByLaterChangesUnderIt() throws Exception {
    PathGuard guard = new PathGuard();
    PathGuard.Held first = guard.hold("completing /dir/a", p("/dir/a"));
    java.util.List<String> order = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    CompletableFuture<Void> dir = holdAsync(guard, "deleting /dir", "/dir", () -> order.add("dir"));
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .until(() -> guard.waiting() == 1 || dir.isDone());
    assertThat(guard.tryHold(p("/dir/b"))).as("gives way to the waiting change").isNull();
    try (PathGuard.Held other = guard.tryHold(p("/other"))) {
      assertThat(other).as("an unrelated path goes").isNotNull();
    }
    CompletableFuture<Void> later = holdAsync(guard, "completing /dir/b", "/dir/b", () -> order.add("later"));
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .until(() -> guard.waiting() == 2 || later.isDone());
    assertThat(later).as("waits behind the change of /dir").isNotDone();
    first.close();
    dir.get(10, TimeUnit.SECONDS);
    later.get(10, TimeUnit.SECONDS);
    assertThat(order).containsExactly("dir", "later");
    assertThat(guard.size()).isZero();
  }

  /** On another thread: holds {@code path} (waiting as a change does), runs {@code held}, and lets go. */
  private static CompletableFuture<Void> holdAsync(PathGuard guard, String change, String path, Runnable held) {
    return CompletableFuture.runAsync(() -> {
      try (PathGuard.Held h = guard.hold(change, p(path))) {
        held.run();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }
}
