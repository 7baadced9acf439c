package io.strata.worker.ufs;

import io.strata.common.exception.StrataException;
import io.strata.common.net.WorkerAddress;
import java.util.List;
import java.util.Map;

/**
 * What the worker's UFS and caching code asks of the master, in domain types (the worker's master sync
 * is the one place these meet protos). Implementations are thread-safe and block for one RPC; call them
 * from worker executor threads, never from a gRPC event thread.
 */
public interface MasterClient {
  /** Where this worker can get {@code blockId}: its live copies and, for a persisted file, its UFS source. */
  BlockSource blockSource(long blockId) throws StrataException;

  /** Where to write the UFS copy of file {@code fileId}, being written CACHE_THROUGH or THROUGH. */
  UfsTarget ufsWriteTarget(long fileId) throws StrataException;

  /**
   * Where to write the UFS copies of several files, asked together: the target of each file the master named one
   * for (a file it refused is left out, and asking for it alone gives the reason).
   */
  default Map<Long, UfsTarget> ufsWriteTargets(List<Long> fileIds) throws StrataException {
    Map<Long, UfsTarget> out = new java.util.HashMap<>();
    for (long id : fileIds) {
      try {
        out.put(id, ufsWriteTarget(id));
      } catch (StrataException e) {
        // left out: the caller asks alone and gets the reason
      }
    }
    return out;
  }

  /** Tells the master this worker holds a new committed block; throws the master's error. */
  void commitBlock(long blockId, long length, String tier) throws StrataException;

  /**
   * Tells the master again that this worker holds a committed block a client found unlisted; does
   * nothing when the block is on its way out of this worker (a removal the master asked for is running).
   */
  default void announce(long blockId, long length, String tier) throws StrataException {
    commitBlock(blockId, length, tier);
  }

  /**
   * Tells the master that the copy of {@code blockId} on {@code holder} (this worker or a peer) failed its
   * checksums at {@code offset}: the master drops that copy unless it is the last one of a file the
   * under file system does not hold. Answers whether it was dropped.
   */
  boolean reportCorrupt(long blockId, WorkerAddress holder, long offset, String reason) throws StrataException;

  /** This worker's id at the master, or -1 while it is not registered. */
  long workerId();

  /** A worker holding a copy of a block. */
  record Location(long workerId, WorkerAddress address) {}

  /** A block's length and copies, and its UFS source (null when its file is not persisted). */
  record BlockSource(long blockId, long length, List<Location> locations, UfsSource ufs) {
    public BlockSource {
      locations = List.copyOf(locations);
    }
  }

  /**
   * A block's place in a persisted file: at {@code offset} of {@code uri}, a file of {@code fileLength} bytes whose
   * UFS modification time Strata recorded as {@code mtimeMs} (0: unknown) and content fingerprint as
   * {@code contentTag} (an object store's ETag; "": none).
   */
  record UfsSource(String uri, Map<String, String> options, long offset, long fileLength, long mtimeMs,
      String contentTag) {
    UfsSource(String uri, Map<String, String> options, long offset, long fileLength) {
      this(uri, options, offset, fileLength, 0);
    }

    UfsSource(String uri, Map<String, String> options, long offset, long fileLength, long mtimeMs) {
      this(uri, options, offset, fileLength, mtimeMs, "");
    }

    public UfsSource {
      options = Map.copyOf(options);
      contentTag = contentTag == null ? "" : contentTag;
    }

    @Override
    public String toString() {
      return "UfsSource[" + uri + ", options=" + io.strata.server.ufs.Redact.options(options) + ", offset=" + offset + "]";
    }
  }

  /** An under file system file to write, with the options of the mount it is under. */
  record UfsTarget(String uri, Map<String, String> options) {
    public UfsTarget {
      options = Map.copyOf(options);
    }

    @Override
    public String toString() {
      return "UfsTarget[" + uri + ", options=" + io.strata.server.ufs.Redact.options(options) + "]";
    }
  }

  /** One block of a file to persist, with its copies. */
  record BlockInfo(long blockId, long length, List<Location> locations) {
    public BlockInfo {
      locations = List.copyOf(locations);
    }
  }

  /** The master's request to write a complete file's blocks, in order, to {@code target}. */
  record PersistCommand(long fileId, UfsTarget target, List<BlockInfo> blocks) {
    public PersistCommand {
      blocks = List.copyOf(blocks);
    }
  }

  /** The outcome of a persist command: ok with the bytes written, or the error. */
  /** A persist's outcome; {@code ufsUri}: the temporary UFS file it wrote (its command's target). */
  record PersistResult(long fileId, boolean ok, String error, long length, String ufsUri) {}
}
