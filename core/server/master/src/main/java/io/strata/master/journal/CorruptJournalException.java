package io.strata.master.journal;

import java.io.IOException;

/** The journal is damaged somewhere other than a torn last record; the master must not start. */
public final class CorruptJournalException extends IOException {
  public CorruptJournalException(String message) {
    super(message);
  }
}
