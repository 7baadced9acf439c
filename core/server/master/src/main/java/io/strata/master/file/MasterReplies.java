package io.strata.master.file;

import io.strata.master.block.BlockState;
import java.util.List;
import java.util.Map;

/** The domain answers of the file system master's UFS-related calls. Immutable records, no behaviour. */
public final class MasterReplies {
  private MasterReplies() {}

  /**
   * Where a block of a persisted file sits in its UFS file, and the file's length, UFS mtime and content fingerprint
   * ("": none) as recorded.
   */
  public record UfsSource(String ufsUri, Map<String, String> options, long offset, long fileLength,
      long ufsMtimeMs, String ufsContentTag) {
    @Override
    public String toString() {
      return "UfsSource[" + ufsUri + ", options=" + io.strata.server.ufs.Redact.options(options) + ", offset=" + offset + "]";
    }
  }

  /** Where a worker can get a block: its live copies, and the UFS when the file is persisted (else null). */
  public record BlockSource(long length, List<BlockState.Location> locations, UfsSource ufs) {}

  /** Where a worker writes a file's UFS copy (a temporary name the master renames into place). */
  public record UfsTarget(String ufsUri, Map<String, String> options) {
    @Override
    public String toString() {
      return "UfsTarget[" + ufsUri + ", options=" + io.strata.server.ufs.Redact.options(options) + "]";
    }
  }

  /** One entry of a batch of write targets: the target, or (target null) the entry's error. */
  public record UfsTargetResult(UfsTarget target, io.strata.common.exception.StrataException error) {}

  /** A worker is to write a complete file's blocks, in order, to {@code ufsUri}. */
  public record PersistCommand(long fileId, String ufsUri, Map<String, String> options, List<BlockState> blocks) {
    @Override
    public String toString() {
      return "PersistCommand[file " + fileId + " to " + ufsUri + ", options=" + io.strata.server.ufs.Redact.options(options) + ", "
          + blocks.size() + " blocks]";
    }
  }

  /** A worker's outcome of a persist command. */
  /**
   * A worker's persist outcome; {@code ufsUri}: the temporary UFS file it wrote (empty: the attempt last sent to it,
   * as from a worker that does not say).
   */
  public record PersistResult(long fileId, boolean ok, String error, long length, String ufsUri) {
    public PersistResult(long fileId, boolean ok, String error, long length) {
      this(fileId, ok, error, length, "");
    }
  }

  /**
   * The master's heartbeat answer: re-register, blocks to remove, files to persist, pins, and blocks whose
   * files are now persisted (the worker may evict them).
   */
  public record WorkerReply(boolean reregister, List<Long> removeBlockIds, List<PersistCommand> persist,
      long pinVersion, List<Long> pinnedFileIds, io.strata.master.block.BlockMaster.ReleaseBatch evictable) {}

  /** What a free did. */
  public record FreeResult(long filesFreed, long blocksFreed) {}
}
