package io.strata.master;

import io.strata.common.conf.StrataConf;
import io.strata.master.journal.Journal;
import io.strata.master.journal.JournalLock;
import java.nio.file.Path;

/**
 * {@code bin/strata format [--force]}: initialises the master's journal. Refuses to wipe a journal that
 * holds entries unless {@code --force}, and refuses always while a master runs on it: it takes the
 * journal's {@link JournalLock} exclusively for the time of the wipe.
 */
public final class FormatMain {
  private FormatMain() {}

  public static void main(String[] args) {
    boolean force = false;
    for (String a : args) {
      if (a.equals("--force") || a.equals("-f")) {
        force = true;
      } else {
        System.err.println("format: unknown option " + a + " (usage: strata format [--force])");
        System.exit(2);
      }
    }
    Path dir = MasterProcess.journalDir(StrataConf.load());
    try {
      try (JournalLock lock = JournalLock.acquire(dir, true)) {
        Journal.format(dir, force);
      }
      System.out.println("Formatted the journal at " + dir + " (cluster " + Journal.clusterId(dir) + "; workers "
          + "holding blocks of an earlier cluster are refused until their storage dirs are emptied)");
    } catch (JournalLock.HeldException e) {
      System.err.println("format: refusing to format: " + e.getMessage());
      System.exit(1);
    } catch (Exception e) {
      System.err.println("format: " + e.getMessage());
      System.exit(1);
    }
  }
}
