package io.strata.worker.shortcircuit;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.StrataException;
import io.strata.proto.AbortTempBlockProto;
import io.strata.proto.CommitTempBlockProto;
import io.strata.proto.CreateTempBlockProto;
import io.strata.proto.GrantSpaceProto;
import io.strata.proto.ShortCircuitResponse;
import io.strata.worker.rpc.Committer;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.SentChecksums;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The temp blocks one short-circuit connection writes (short-circuit writes). A client creates a temp
 * block with an initial grant of space, asks for more as it writes, receives a descriptor of the temp
 * file opened for writing (or opens its path), writes it itself and commits its length. The worker never
 * writes a byte of it; what it enforces is at commit: the file must hold exactly the length committed,
 * within what was granted (the grants are reserved through the store's normal accounting, so the store
 * never counts less than a committed block holds), with one CRC32C per checksum chunk, sent with the
 * GRANTs and the COMMIT, which become the block's stored checksums. Then the block is committed as a streamed one is
 * ({@link Committer#commitTemp}: fsync on fsync tiers, rename, the master).
 *
 * <p>Every temp block belongs to its connection: a failed grant, a refused commit, an abort, and the end
 * of the connection drop it (file deleted, space returned). Limit of descriptor passing: the client
 * keeps its own descriptor of the file until it closes it, so a client that writes past its grant uses
 * disk the store does not count until its commit is refused; and one that keeps the descriptor past
 * commit can still change its own committed block (never another file).
 *
 * <p>Threading: called by one connection's handler thread at a time (Netty serialises a channel's
 * callbacks), so its map needs no lock; the store is thread-safe.
 */
final class WriteSessions {
  private static final Logger LOG = LoggerFactory.getLogger(WriteSessions.class);

  private final BlockStore store;
  private final Committer committer;
  private final ShortCircuitServer.Counters counters;
  private final Map<Long, BlockStore.TempBlock> temps = new HashMap<>();
  /** The checksums each temp block's writer sent so far (with its GRANTs), in chunk order. */
  private final Map<Long, SentChecksums> sums = new HashMap<>();

  WriteSessions(BlockStore store, Committer committer, ShortCircuitServer.Counters counters) {
    this.store = store;
    this.committer = committer;
    this.counters = counters;
  }

  /** CREATE: a temp block (or the one ReserveBlock reserved whole) with its initial grant. */
  ShortCircuitResponse create(CreateTempBlockProto c) throws IOException {
    long id = c.getBlockId();
    if (temps.containsKey(id)) {
      throw new io.strata.common.exception.AlreadyExistsException("Block " + id + " is already being written on "
          + "this short-circuit connection");
    }
    if (c.getInitialGrant() < 0) {
      throw new InvalidArgumentException("Block " + id + ": negative initial grant " + c.getInitialGrant());
    }
    BlockStore.TempBlock temp = c.getReserved() ? store.reserved(id) : store.createTemp(id, c.getMaxLength());
    long granted;
    String path;
    try {
      path = temp.path().toAbsolutePath().toString();
      granted = temp.grant(c.getInitialGrant());
    } catch (StrataException | RuntimeException e) {
      store.abort(temp);
      throw e;
    }
    // Its writer writes the file directly, so the worker sees no appends: the idle-temp reaper must not take it
    // for abandoned (a slow writer's block was removed under it). Its liveness is this connection's (its death
    // aborts it: abortAll) and its file's lease (the master's recovery aborts it).
    temp.hold();
    temps.put(id, temp);
    // Bounded by the block's own maximum, as the store checked it: a reserved block's CREATE names a max_length the
    // store never looks at, and a huge one would let the writer grow this list until the worker runs out of memory.
    sums.put(id, SentChecksums.bounded(id, temp.maxLength()));
    counters.tempsCreated.incrementAndGet();
    counters.writesNow.incrementAndGet();
    return ShortCircuitResponse.newBuilder().setPath(path).setGranted(granted).build();
  }

  /**
   * GRANT: more space, and the checksums of the chunks written since the last one; a full tier fails it
   * (RESOURCE_EXHAUSTED) and drops the temp block, as do too many checksums.
   */
  ShortCircuitResponse grant(GrantSpaceProto g) throws IOException {
    BlockStore.TempBlock temp = mine(g.getBlockId());
    try {
      sums.get(g.getBlockId()).add(g.getChunkCrc32CList());
      return ShortCircuitResponse.newBuilder().setGranted(temp.grant(g.getBytes())).build();
    } catch (StrataException | RuntimeException e) {
      drop(temp);
      throw e;
    }
  }

  /** SEND_FD for writing: the temp file opened read-write; null when this connection does not write it. */
  OpenFiles.Opened openForWrite(long blockId) throws IOException {
    BlockStore.TempBlock temp = temps.get(blockId);
    if (temp == null) {
      return null;
    }
    OpenFiles.Opened file = OpenFiles.openForWrite(temp.path());
    try {
      // Still live after the open? An abort marks the block before deleting its file, so from here any
      // abort deletes what this open reached; if it was aborted already, the open may have re-created it.
      temp.grant(0);
    } catch (StrataException | RuntimeException e) {
      file.file().close();
      java.nio.file.Files.deleteIfExists(temp.path());
      drop(temp);
      throw new IOException("Temp block " + blockId + " was dropped before its descriptor could be sent: "
          + e.getMessage(), e);
    }
    return file;
  }

  /** The rest of a commit: in the store and at the master. */
  interface PreparedCommit {
    ShortCircuitResponse run() throws IOException;

    /** Drops the temp block instead (the commit cannot be run); returns its space. */
    void abort();
  }

  /**
   * COMMIT, first part, on the connection's thread: takes the temp block out of this connection's sessions
   * (so nothing here touches it again) and records its length and checksums (the store checks the file
   * against them and the grant at commit). The returned call commits it in
   * the store and at the master, and may run on any thread: it touches only the store (thread-safe) and the
   * temp block.
   */
  PreparedCommit prepareCommit(CommitTempBlockProto c) throws IOException {
    BlockStore.TempBlock temp = mine(c.getBlockId());
    temps.remove(c.getBlockId());
    SentChecksums sent = sums.remove(c.getBlockId());
    counters.writesNow.decrementAndGet();
    try {
      sent.add(c.getChunkCrc32CList());
      temp.written(c.getLength(), sent.toArray());
    } catch (IOException | RuntimeException e) {
      store.abort(temp);
      throw e;
    }
    return new PreparedCommit() {
      @Override
      public ShortCircuitResponse run() throws IOException {
        BlockStore.BlockMeta meta;
        try {
          meta = committer.commitTemp(store, temp);
        } catch (IOException | RuntimeException e) {
          store.abort(temp); // nothing once committed; a refused commit deletes the file and returns its space
          throw e;
        }
        counters.bytesCommitted.addAndGet(meta.length());
        return ShortCircuitResponse.newBuilder().setLength(meta.length()).setTier(meta.tier()).build();
      }

      @Override
      public void abort() {
        store.abort(temp);
      }
    };
  }

  /** ABORT: drops the temp block. */
  ShortCircuitResponse abort(AbortTempBlockProto a) throws StrataException {
    drop(mine(a.getBlockId()));
    return ShortCircuitResponse.getDefaultInstance();
  }

  /** The connection ended: every temp block it still writes is dropped. */
  void abortAll() {
    List<BlockStore.TempBlock> all = new ArrayList<>(temps.values());
    for (BlockStore.TempBlock t : all) {
      drop(t);
      counters.abortedByDisconnect.incrementAndGet();
    }
    if (!all.isEmpty()) {
      LOG.info("Short-circuit connection ended with {} blocks being written; dropped them", all.size());
    }
  }

  private BlockStore.TempBlock mine(long blockId) throws StrataException {
    BlockStore.TempBlock temp = temps.get(blockId);
    if (temp == null) {
      throw new FailedPreconditionException("Block " + blockId + " is not being written on this short-circuit "
          + "connection (never created here, already committed or aborted, or dropped after a failed grant)");
    }
    return temp;
  }

  private void drop(BlockStore.TempBlock temp) {
    sums.remove(temp.blockId());
    if (temps.remove(temp.blockId()) != null) {
      counters.writesNow.decrementAndGet();
    }
    store.abort(temp);
  }
}
