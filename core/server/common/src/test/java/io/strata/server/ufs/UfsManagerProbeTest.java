package io.strata.server.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link UfsManager#probe} keeps no client of a probe that failed or timed out, whenever the probe thread gets to
 * open it: over Hadoop's local file system, with a client whose opening waits for the test (as an HDFS or S3 client
 * opening on a loaded machine, or an unresponsive one, takes long and does not heed interrupts).
 */
class UfsManagerProbeTest {
  @TempDir
  Path dir;

  /** Hadoop's local file system whose {@code initialize} waits, uninterruptibly, until the test releases it. */
  public static final class SlowOpening extends RawLocalFileSystem {
    static volatile CountDownLatch entered = new CountDownLatch(0);
    static volatile CountDownLatch release = new CountDownLatch(0);
    static final AtomicInteger opened = new AtomicInteger();
    static final AtomicInteger closed = new AtomicInteger();

    @Override
    public void initialize(java.net.URI name, Configuration conf) throws IOException {
      entered.countDown();
      boolean interrupted = false;
      while (true) {
        try {
          if (!release.await(30, TimeUnit.SECONDS)) {
            throw new IOException("the test never released the opening");
          }
          break;
        } catch (InterruptedException e) {
          interrupted = true; // not heeded, as many clients' connection set-up does not
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
      super.initialize(name, conf);
      opened.incrementAndGet();
    }

    @Override
    public void close() throws IOException {
      closed.incrementAndGet();
      super.close();
    }
  }

  private static final Map<String, String> SLOW = Map.of("fs.file.impl", SlowOpening.class.getName(),
      "fs.file.impl.disable.cache", "true");

  @AfterEach
  void releaseAll() {
    SlowOpening.release.countDown();
  }

  @Test
  void probeThatTimesOutWhileItsClientOpens_keepsNoClient_whenTheOpeningEndsLater() throws Exception {
    SlowOpening.entered = new CountDownLatch(1);
    SlowOpening.release = new CountDownLatch(1);
    SlowOpening.opened.set(0);
    SlowOpening.closed.set(0);
    String uri = "file:" + dir;
    try (UfsManager m = new UfsManager(4, Duration.ofMinutes(5))) {
      assertThatThrownBy(() -> m.probe(uri, SLOW, Duration.ofMillis(300)))
          .isInstanceOf(java.io.InterruptedIOException.class).hasMessageContaining("did not answer within");
      assertThat(SlowOpening.entered.await(10, TimeUnit.SECONDS)).as("the probe began opening its client").isTrue();
      SlowOpening.release.countDown(); // the opening ends after its probe was given up
      await().atMost(Duration.ofSeconds(20)).until(() -> SlowOpening.closed.get() >= 1);
      assertThat(SlowOpening.opened.get()).isEqualTo(1);
      assertThat(SlowOpening.closed.get()).as("the late client is closed by its probe thread").isEqualTo(1);
      assertThat(m.openClients()).isZero();
      assertThat(m.isOpen(uri, SLOW)).isFalse();
    }
  }

  @Test
  void probeThatAnswers_keepsItsClientForWhatFollows_andAProbeThroughAClientOpenBeforeLeavesIt() throws Exception {
    SlowOpening.opened.set(0);
    SlowOpening.closed.set(0);
    Files.writeString(dir.resolve("f"), "abc");
    String uri = "file:" + dir;
    try (UfsManager m = new UfsManager(4, Duration.ofMinutes(5))) {
      assertThat(m.probe(uri + "/f", SLOW, Duration.ofSeconds(20)).length()).isEqualTo(3);
      assertThat(m.openClients()).isEqualTo(1);
      UnderFileSystem kept = m.get(uri, SLOW);
      assertThat(m.probe(uri + "/missing", SLOW, Duration.ofSeconds(20))).isNull();
      assertThat(m.get(uri, SLOW)).as("the client others use stays").isSameAs(kept);
      assertThat(m.openClients()).isEqualTo(1);
      assertThat(SlowOpening.opened.get()).as("one client for both probes and the gets").isEqualTo(1);
      assertThat(SlowOpening.closed.get()).isZero();
    }
    assertThat(SlowOpening.closed.get()).isEqualTo(1);
  }
}
