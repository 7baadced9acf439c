package io.strata.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.StrataException;
import io.strata.master.journal.Journal;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master whose journal fails for good (here: another master fenced it, the failure a deposed leader sees; a disk
 * error takes the same path) steps down at once instead of serving a namespace whose changes can no longer become
 * durable: its fatal handler runs (MasterMain exits), once, and it stops leading. What it acknowledged before is
 * still there for the master that recovers the journal; the change that failed is not. A real master on loopback.
 */
class MasterJournalFailureTest {
  @TempDir
  Path tmp;

  private StrataConf conf() {
    return StrataConf.of(Map.of(
        CommonKeys.HOME.name(), tmp.toString(),
        MasterKeys.JOURNAL_DIR.name(), "journal",
        MasterKeys.BIND_HOST.name(), "127.0.0.1",
        CommonKeys.MASTER_RPC_PORT.name(), "0"));
  }

  @Test
  void aJournalThatFailsForGood_makesTheMasterStepDown_andKeepsWhatWasAcknowledged() throws Exception {
    CountDownLatch fatal = new CountDownLatch(1);
    AtomicInteger fatalCalls = new AtomicInteger();
    try (MasterProcess master = new MasterProcess(conf(), Clock.systemUTC())
        .onFatal(() -> {
          fatalCalls.incrementAndGet();
          fatal.countDown();
        }).start()) {
      master.fileSystemMaster().createDirectory("/acknowledged", false, false, 0755);
      var written = master.fileSystemMaster().createFile("/written", 1 << 20, false, 0644);
      assertThat(master.fileSystemMaster().endedFiles(java.util.List.of(written.id(), 12345L)))
          .as("a file being written has not ended; an unknown one has").containsExactly(12345L);
      assertThat(master.isLeading()).isTrue();

      try (Journal successor = new Journal(tmp.resolve("journal"), 1 << 20)) {
        successor.replayReadOnly(e -> { });
        successor.takeOver(e -> { }); // fences the running master's journal
      }
      assertThatThrownBy(() -> master.fileSystemMaster().createDirectory("/lost", false, false, 0755))
          .isInstanceOf(StrataException.class)
          .hasMessageContaining("not durable");
      // A complete applied in memory that never became durable: workers are not told the file ended (they would
      // drop what they hold of a file that, recovered from the journal, is still being written).
      assertThatThrownBy(() -> master.fileSystemMaster().completeFile("/written", written.id(), 0))
          .isInstanceOf(StrataException.class);
      assertThat(master.fileSystemMaster().endedFiles(java.util.List.of(written.id()))).isEmpty();

      assertThat(fatal.await(10, TimeUnit.SECONDS)).as("the fatal handler ran").isTrue();
      assertThat(master.isLeading()).isFalse();
      // A second failing change does not step down twice.
      assertThatThrownBy(() -> master.fileSystemMaster().createDirectory("/lost2", false, false, 0755))
          .isInstanceOf(StrataException.class);
      org.awaitility.Awaitility.await().during(java.time.Duration.ofMillis(200))
          .atMost(java.time.Duration.ofSeconds(5)).until(() -> fatalCalls.get() == 1);
    }
    try (MasterProcess next = new MasterProcess(conf(), Clock.systemUTC()).start()) {
      assertThat(next.fileSystemMaster().exists("/acknowledged")).isTrue();
      assertThat(next.fileSystemMaster().exists("/lost")).isFalse();
      assertThat(next.fileSystemMaster().getStatus("/written").complete()).isFalse();
      assertThat(next.isLeading()).isTrue();
    }
  }
}
