package io.strata.master.file;

/** Whether the under file system holds a file (or directory). */
public enum PersistenceState {
  /** Only in Strata (MUST_CACHE, or a file still being written). */
  NOT_PERSISTED,
  /** Complete in Strata; the persist scheduler will write it to the under file system (ASYNC_THROUGH). */
  TO_BE_PERSISTED,
  /** The under file system holds it; cached blocks may be freed. */
  PERSISTED,
  /** Its data is gone from Strata and was never persisted. */
  LOST;

  /** "" (an old journal entry, an unset field) reads as NOT_PERSISTED. */
  public static PersistenceState parse(String s) {
    return s == null || s.isEmpty() ? NOT_PERSISTED : valueOf(s);
  }
}
