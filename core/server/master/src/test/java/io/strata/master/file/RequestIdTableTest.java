package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.master.journal.JournalEntry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The request-id table's bounds: ids per client, ids in all, and age (by the entries' own times, as replay sees
 * them).
 */
class RequestIdTableTest {
  private static JournalEntry.RequestDone done(String client, long call, long timeMs) {
    return new JournalEntry.RequestDone(client, call, 100 + call, timeMs);
  }

  @Test
  void perClient_theOldestIdsGoFirst_otherClientsKeepTheirs() {
    RequestIdTable t = new RequestIdTable(2, Duration.ofMinutes(10));
    t.record(done("a", 1, 0));
    t.record(done("b", 1, 0));
    t.record(done("a", 2, 1));
    t.record(done("a", 3, 2));
    assertThat(t.lookup(new RequestId("a", 1), 2)).isNull();
    assertThat(t.lookup(new RequestId("a", 2), 2).inodeId()).isEqualTo(102);
    assertThat(t.lookup(new RequestId("a", 3), 2).inodeId()).isEqualTo(103);
    assertThat(t.lookup(new RequestId("b", 1), 2).inodeId()).isEqualTo(101);
    assertThat(t.size("a")).isEqualTo(2);
    assertThat(t.size()).isEqualTo(3);
  }

  @Test
  void byAge_anIdPastTheRetentionIsNotAnswered_andSilentClientsAreForgottenWhole() {
    RequestIdTable t = new RequestIdTable(100, Duration.ofMillis(1000));
    t.record(done("old", 1, 0));
    t.record(done("old", 2, 10));
    t.record(done("live", 1, 500));
    assertThat(t.lookup(new RequestId("old", 2), 1010)).isNotNull(); // exactly the retention: kept
    assertThat(t.lookup(new RequestId("old", 2), 1011)).isNull();
    assertThat(t.size()).isEqualTo(3); // lookups drop nothing

    t.record(done("live", 2, 1200)); // "old" last recorded at 10: gone, both ids
    assertThat(t.size("old")).isZero();
    assertThat(t.size("live")).isEqualTo(2);
    t.record(done("live", 3, 1600)); // live's id at 500 is past the retention now
    assertThat(t.size("live")).isEqualTo(2);
    assertThat(t.lookup(new RequestId("live", 1), 1600)).isNull();
    assertThat(t.snapshotEntries()).containsExactly(done("live", 2, 1200), done("live", 3, 1600));
  }

  @Test
  void inAll_clientsThatEachMakeUpANewId_keepTheTableAtItsBound_theLeastRecentClientsGoFirst() {
    RequestIdTable t = new RequestIdTable(100, 50, Duration.ofMinutes(10));
    t.record(done("steady", 1, 0));
    for (int i = 0; i < 10_000; i++) {
      t.record(done("made-up-" + i, 1, i));
      if (i % 1000 == 0) {
        t.record(done("steady", 2 + i, i)); // heard from again: moves to the newest end
      }
      assertThat(t.size()).isLessThanOrEqualTo(50);
    }
    assertThat(t.size()).isEqualTo(50);
    assertThat(t.size("made-up-0")).isZero();
    assertThat(t.lookup(new RequestId("made-up-9999", 1), 9999)).isNotNull();
    assertThat(t.lookup(new RequestId("made-up-9950", 1), 9999)).isNotNull();
    assertThat(t.lookup(new RequestId("made-up-9949", 1), 9999)).as("past the bound in all").isNull();
    // A replay of the same records drops exactly the same ids.
    RequestIdTable replay = new RequestIdTable(100, 50, Duration.ofMinutes(10));
    for (JournalEntry e : t.snapshotEntries()) {
      replay.record((JournalEntry.RequestDone) e);
    }
    assertThat(replay.snapshotEntries()).isEqualTo(t.snapshotEntries());
  }
}
