package io.strata.master.journal;

/**
 * Where state changes are recorded, in the order they were applied. {@link #append} is called while the
 * changed structure's lock is held, so journal order is apply order; it only queues, never waits.
 * Implementations are thread-safe.
 */
@FunctionalInterface
public interface JournalSink {
  void append(JournalEntry entry);

  /** A sink that keeps nothing (tests of the namespace alone, replay). */
  JournalSink NONE = entry -> {};
}
