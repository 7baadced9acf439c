package io.strata.server.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link UfsManager#discard} and {@link UfsManager#close} never close a client under a lease: it is taken out of the
 * map at once and closed at its last release. Over real local-dir clients (Hadoop's local file system).
 */
class UfsManagerRetireTest {
  private static final Map<String, String> OPTS = Map.of("o", "a");

  @TempDir
  Path dir;

  @Test
  void discard_whileAWriteHoldsALease_letsTheWriteFinish_andClosesTheClientAtItsRelease() throws Exception {
    String uri = "file:" + dir;
    try (UfsManager m = new UfsManager()) {
      UfsManager.Lease lease = m.acquire(uri, OPTS);
      UnderFileSystem leased = lease.ufs();
      CountDownLatch halfWritten = new CountDownLatch(1);
      CountDownLatch discarded = new CountDownLatch(1);
      // A through write as a worker makes it: a temp copy written through the lease, then renamed into place.
      CompletableFuture<Void> write = CompletableFuture.runAsync(() -> {
        try (lease) {
          try (OutputStream out = leased.createNonRecursive(uri + "/.f.tmp")) {
            out.write("first half,".getBytes(StandardCharsets.UTF_8));
            halfWritten.countDown();
            assertThat(discarded.await(10, TimeUnit.SECONDS)).isTrue();
            out.write("second half".getBytes(StandardCharsets.UTF_8));
          }
          assertThat(leased.rename(uri + "/.f.tmp", uri + "/f")).isTrue();
        } catch (IOException | InterruptedException e) {
          throw new IllegalStateException(e);
        }
      });
      assertThat(halfWritten.await(10, TimeUnit.SECONDS)).isTrue();
      m.discard(uri, OPTS);
      assertThat(m.isOpen(uri, OPTS)).as("out of the map at once").isFalse();
      UnderFileSystem next = m.get(uri, OPTS);
      assertThat(next).as("a new use gets a new client").isNotSameAs(leased);
      int retiredWhileLeased = m.retiredLeasedClients();
      discarded.countDown();

      write.get(10, TimeUnit.SECONDS); // no exception: the write, its close and its rename went through
      assertThat(Files.readString(dir.resolve("f"))).isEqualTo("first half,second half");
      assertThat(retiredWhileLeased).as("left open for its lease").isEqualTo(1);
      assertThat(m.retiredLeasedClients()).isZero();
      assertThatThrownBy(() -> leased.getStatus(uri + "/f")).as("closed at the lease's release")
          .isInstanceOf(IOException.class).hasMessageContaining("is closed");
      assertThat(next.getStatus(uri + "/f").length()).isEqualTo(22);
    }
  }

  @Test
  void discard_ofAnUnleasedClient_closesItAtOnce() throws Exception {
    String uri = "file:" + dir;
    try (UfsManager m = new UfsManager()) {
      UnderFileSystem c = m.get(uri, OPTS);
      UfsManager.Lease other = m.acquire(uri, Map.of("o", "b")); // another key's lease keeps only its own client
      m.discard(uri, OPTS);
      assertThat(m.retiredLeasedClients()).isZero();
      assertThatThrownBy(() -> c.getStatus(uri)).isInstanceOf(IOException.class).hasMessageContaining("is closed");
      assertThat(other.ufs().getStatus(uri).directory()).isTrue();
      other.close();
    }
  }

  @Test
  void close_closesIdleClientsAtOnce_andEachLeasedOneAtItsLastRelease() throws Exception {
    String uri = "file:" + dir;
    Files.writeString(dir.resolve("g"), "xyz");
    UfsManager m = new UfsManager(4, Duration.ofHours(1));
    UnderFileSystem idle = m.get(uri, Map.of("o", "idle"));
    UfsManager.Lease first = m.acquire(uri, OPTS);
    UfsManager.Lease second = m.acquire(uri, OPTS);
    m.close();

    assertThatThrownBy(() -> idle.getStatus(uri)).isInstanceOf(IOException.class).hasMessageContaining("is closed");
    assertThatThrownBy(() -> m.acquire(uri, OPTS)).isInstanceOf(IOException.class)
        .hasMessageContaining("clients are closed");
    assertThat(m.openClients()).isZero();
    assertThat(m.retiredLeasedClients()).isEqualTo(1);
    first.close();
    assertThat(second.ufs().getStatus(uri + "/g").length()).as("still leased by the second").isEqualTo(3);
    second.close();
    assertThat(m.retiredLeasedClients()).isZero();
    assertThatThrownBy(() -> second.ufs().getStatus(uri)).isInstanceOf(IOException.class)
        .hasMessageContaining("is closed");
  }
}
