package io.strata.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.master.journal.JournalLock;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master started by mistake next to a running one (same journal dir; or the same port) fails before it
 * touches the journal, so the running master keeps accepting changes; format cannot take a journal a
 * master holds. Real masters in one JVM, on loopback.
 */
class OneMasterPerJournalTest {
  @TempDir
  Path tmp;

  private StrataConf conf(int port) {
    return StrataConf.of(Map.of(
        CommonKeys.HOME.name(), tmp.toString(),
        MasterKeys.JOURNAL_DIR.name(), "journal",
        MasterKeys.BIND_HOST.name(), "127.0.0.1",
        CommonKeys.MASTER_RPC_PORT.name(), Integer.toString(port)));
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  private String epochs() throws IOException {
    Path f = tmp.resolve("journal/EPOCHS");
    return Files.exists(f) ? Files.readString(f) : "";
  }

  @Test
  void aSecondMaster_onTheSameJournal_isRefused_andTheRunningOneStillAcceptsChanges() throws Exception {
    try (MasterProcess running = new MasterProcess(conf(0), Clock.systemUTC()).start()) {
      running.fileSystemMaster().createDirectory("/before", false, false, 0755);
      String epochsBefore = epochs();

      MasterProcess mistake = new MasterProcess(conf(0), Clock.systemUTC());
      assertThatThrownBy(mistake::start)
          .isInstanceOf(JournalLock.HeldException.class)
          .hasMessageContaining("a master is running on the journal at " + tmp.resolve("journal").toRealPath())
          .hasMessageContaining("stop it first");

      assertThat(epochs()).as("no epoch reserved or claimed").isEqualTo(epochsBefore);
      running.fileSystemMaster().createDirectory("/after", false, false, 0755);
      assertThat(running.fileSystemMaster().exists("/after")).isTrue();
    }
  }

  @Test
  void aSecondMaster_onATakenPort_failsBeforeItTouchesTheJournal() throws Exception {
    int port = freePort();
    try (MasterProcess running = new MasterProcess(conf(port), Clock.systemUTC()).start()) {
      String epochsBefore = epochs();
      MasterProcess mistake = new MasterProcess(conf(port), Clock.systemUTC());
      assertThatThrownBy(mistake::start)
          .isInstanceOf(IOException.class)
          .hasMessageContaining("The master cannot listen on 127.0.0.1:" + port)
          .hasMessageContaining("is another master or bin/strata-start.sh local running?");
      assertThat(epochs()).isEqualTo(epochsBefore);
      running.fileSystemMaster().createDirectory("/still-writable", false, false, 0755);
      assertThat(running.fileSystemMaster().exists("/still-writable")).isTrue();
    }
  }

  @Test
  void theJournalLock_isHeldWhileAMasterRuns_andReleasedByItsCloseAndByAFailedStart() throws Exception {
    Path dir = tmp.resolve("journal");
    try (MasterProcess running = new MasterProcess(conf(0), Clock.systemUTC()).start()) {
      assertThat(JournalLock.isHeld(dir)).isTrue();
      assertThatThrownBy(() -> JournalLock.acquire(dir, true)).isInstanceOf(JournalLock.HeldException.class);
      assertThatThrownBy(() -> JournalLock.acquire(dir, false)).isInstanceOf(JournalLock.HeldException.class);
      assertThatThrownBy(new MasterProcess(conf(0), Clock.systemUTC())::start).isInstanceOf(IOException.class);
    }
    assertThat(JournalLock.isHeld(dir)).isFalse();
    try (MasterProcess again = new MasterProcess(conf(0), Clock.systemUTC()).start()) {
      assertThat(again.fileSystemMaster().exists("/")).isTrue();
    }
  }

  @Test
  void sharedHolders_HAMasters_excludeOnlyAnExclusiveHolder() throws Exception {
    Path dir = tmp.resolve("shared");
    try (JournalLock a = JournalLock.acquire(dir, false); JournalLock b = JournalLock.acquire(dir, false)) {
      assertThatThrownBy(() -> JournalLock.acquire(dir, true)).isInstanceOf(JournalLock.HeldException.class);
      a.close();
      assertThat(JournalLock.isHeld(dir)).as("b still holds it").isTrue();
    }
    assertThat(JournalLock.isHeld(dir)).isFalse();
  }
}
