package io.strata.master.block;

/** How the block master asks the namespace about the file a block belongs to. */
@FunctionalInterface
public interface FileLookup {
  /** What the namespace knows of a file id. */
  enum FileState { MISSING, INCOMPLETE, COMPLETE }

  FileState stateOf(long fileId);
}
