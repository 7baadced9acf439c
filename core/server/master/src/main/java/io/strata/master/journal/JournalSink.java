package io.strata.master.journal;

import java.util.List;

/**
 * Where state changes are recorded, in the order they were applied. {@link #append} is called while the
 * changed structure's lock is held, so journal order is apply order; it only queues, never waits.
 * Implementations are thread-safe.
 */
@FunctionalInterface
public interface JournalSink {
  /**
   * Records the entries of one operation, in order (a recursive create: each missing parent, then the
   * file). Recovery applies all of them or none, so a crash never leaves an operation half-applied.
   */
  void append(List<JournalEntry> operation);

  /** A sink that keeps nothing (tests of the namespace alone, replay). */
  JournalSink NONE = operation -> {};
}
