package io.strata.client.shortcircuit;

import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.StrataException;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.AbortTempBlockProto;
import io.strata.proto.CommitTempBlockProto;
import io.strata.proto.CreateTempBlockProto;
import io.strata.proto.GrantSpaceProto;
import io.strata.proto.ShortCircuitRequest;
import io.strata.proto.ShortCircuitResponse;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One block written short-circuit: a temp block the local worker created for this client (owned by the
 * connection it holds), a {@link FileChannel} for writing on its file (the descriptor the worker passed,
 * reopened through {@code /proc/self/fd}, or the path it named), and the space granted so far. The
 * writer writes the channel, asks for more space with {@link #grant} before it writes past
 * {@link #granted()} (sending the checksums of the chunks it finished so far with each), and ends with
 * {@link #commit} (the rest of them) (the worker checks length and grant, fsyncs on fsync
 * tiers and commits at the master) or {@link #abort}. If this process dies first, its connection ends
 * and the worker drops the temp block.
 *
 * <p>The channel is opened for reading too where the file's mode allows ({@link #readable}), so that a
 * writer whose worker fails can read back what it wrote ({@link #detachChannel}); it stays open until the
 * commit succeeds, since a failed commit is such a failure.
 *
 * <p>Not thread-safe: one writer thread.
 */
public final class ShortCircuitWrite {
  private final ShortCircuitClient client;
  private final WorkerAddress worker;
  private final ShortCircuitConnection conn;
  private final long blockId;
  private final FileChannel channel;
  private final boolean readable;
  private long granted;
  private boolean done;
  /** The channel was handed to the caller ({@link #detachChannel}), who closes it. */
  private boolean detached;

  private ShortCircuitWrite(ShortCircuitClient client, WorkerAddress worker, ShortCircuitConnection conn, long blockId,
      FileChannel channel, long granted) {
    this.client = client;
    this.worker = worker;
    this.conn = conn;
    this.blockId = blockId;
    this.channel = channel;
    this.readable = channel != null && canRead(channel);
    this.granted = granted;
  }

  private static boolean canRead(FileChannel ch) {
    try {
      ch.read(java.nio.ByteBuffer.allocate(0), 0); // refused before any I/O when not open for reading
      return true;
    } catch (java.nio.channels.NonReadableChannelException | IOException e) {
      return false;
    }
  }

  /**
   * Creates the temp block at the worker and opens its file here; null (the reason logged once) when
   * that is not possible here, so the caller streams instead. A refusal by the worker's store (no room:
   * RESOURCE_EXHAUSTED with the store's message; the block already exists) is thrown: streaming would get
   * the same answer.
   */
  static ShortCircuitWrite create(ShortCircuitClient client, WorkerAddress worker, long blockId, long maxLength,
      boolean reserved, long initialGrant) throws StrataException {
    ShortCircuitConnection conn;
    try {
      conn = client.connection(worker);
    } catch (IOException e) {
      client.fallback("write-connect:" + worker, "Short-circuit to worker " + worker + " is not possible: cannot connect "
          + "to " + client.socketPath(worker) + " (" + e.getMessage() + "); writing through its data port");
      return null;
    }
    ShortCircuitResponse r;
    try {
      r = conn.call(ShortCircuitRequest.newBuilder().setCreate(CreateTempBlockProto.newBuilder().setBlockId(blockId)
          .setMaxLength(maxLength).setReserved(reserved).setInitialGrant(initialGrant)).build());
    } catch (IOException e) {
      client.drop(conn);
      client.fallback("write-io:" + worker, "Short-circuit to worker " + worker + " failed (" + e.getMessage()
          + "); writing through its data port");
      return null;
    }
    if (!r.getErrorCode().isEmpty()) {
      client.release(worker, conn);
      throw refusal(r, "Creating block " + blockId + " on worker " + worker);
    }
    ShortCircuitClient.Mode mode = client.mode();
    FileChannel ch;
    try {
      ch = mode == ShortCircuitClient.Mode.FD ? conn.receiveDescriptor(blockId, true)
          : ShortCircuitConnection.openForWrite(Path.of(r.getPath()));
    } catch (IOException e) {
      String how = mode == ShortCircuitClient.Mode.FD ? "by descriptor" : "by path " + r.getPath();
      client.fallback("write-" + mode + ":" + worker, "Short-circuit " + mode.name().toLowerCase(java.util.Locale.ROOT)
          + " mode cannot open temp block " + blockId + " of worker " + worker + " " + how + " for writing: " + e
          + "; writing through its data port");
      if (mode == ShortCircuitClient.Mode.FD) {
        client.drop(conn); // the descriptor exchange left the connection in an unknown state; the worker drops the block
      } else {
        new ShortCircuitWrite(client, worker, conn, blockId, null, 0).abort(); // its space back before streaming
      }
      return null;
    }
    client.writesCreated.incrementAndGet();
    return new ShortCircuitWrite(client, worker, conn, blockId, ch, r.getGranted());
  }

  private static StrataException refusal(ShortCircuitResponse r, String what) {
    ErrorCode code;
    try {
      code = ErrorCode.valueOf(r.getErrorCode());
    } catch (IllegalArgumentException e) {
      code = ErrorCode.INTERNAL;
    }
    // The code in the message too, as a streamed write's gRPC status shows it (RESOURCE_EXHAUSTED: ...).
    return code.toException(what + " short-circuit: " + code.name() + ": " + r.getErrorMessage(), null);
  }

  public long blockId() {
    return blockId;
  }

  public WorkerAddress worker() {
    return worker;
  }

  /** The temp block's file, open for writing; write it by position from 0. */
  public FileChannel channel() {
    return channel;
  }

  /** Whether {@link #channel()} can also read the file back (the file's mode lets this client read it). */
  public boolean readable() {
    return readable;
  }

  /**
   * Hands the channel to the caller, who closes it: after a failure, the bytes written so far stay readable
   * through it (the descriptor keeps the file even once the worker deletes it or is gone), and
   * {@link #abort} no longer closes it.
   */
  public FileChannel detachChannel() {
    detached = true;
    return channel;
  }

  /** Bytes the worker has granted so far: the block may hold at most this many at commit. */
  public long granted() {
    return granted;
  }

  /** The most checksums one GRANT or COMMIT carries (4 bytes each: a frame is at most 64 KiB). */
  public static final int MAX_CHECKSUMS_PER_MESSAGE = 8192;

  /**
   * Asks for {@code bytes} more room (the worker caps it at the block's maximum length; 0 asks for none)
   * and sends {@code crcs[from, to)}, the checksums of the next chunks this writer finished (at most
   * {@link #MAX_CHECKSUMS_PER_MESSAGE}). A full tier answers RESOURCE_EXHAUSTED with the store's message,
   * and the worker has dropped the temp block then.
   */
  public long grant(long bytes, int[] crcs, int from, int to) throws IOException {
    GrantSpaceProto.Builder g = GrantSpaceProto.newBuilder().setBlockId(blockId).setBytes(bytes);
    for (int i = from; i < to; i++) {
      g.addChunkCrc32C(crcs[i]);
    }
    ShortCircuitResponse r = callOrDrop(ShortCircuitRequest.newBuilder().setGrant(g).build(), "Granting space for");
    if (!r.getErrorCode().isEmpty()) {
      finish();
      throw refusal(r, "Granting space for block " + blockId + " on worker " + worker);
    }
    granted = r.getGranted();
    return granted;
  }

  /**
   * Commits the block with {@code length} bytes and {@code crcs[from, to)}, the checksums not sent with a
   * grant yet (at most {@link #MAX_CHECKSUMS_PER_MESSAGE}: send more with {@code grant(0, ...)} first), then
   * closes the file; returns the committed length. When the commit fails the file stays open, for
   * {@link #detachChannel} (or {@link #abort}, which closes it).
   */
  public long commit(long length, int[] crcs, int from, int to) throws IOException {
    CommitTempBlockProto.Builder c = CommitTempBlockProto.newBuilder().setBlockId(blockId).setLength(length);
    for (int i = from; i < to; i++) {
      c.addChunkCrc32C(crcs[i]);
    }
    ShortCircuitResponse r = callOrDrop(ShortCircuitRequest.newBuilder().setCommit(c).build(), "Committing");
    finish();
    if (!r.getErrorCode().isEmpty()) {
      throw refusal(r, "Committing block " + blockId + " on worker " + worker);
    }
    closeChannel();
    return r.getLength();
  }

  /**
   * Drops the temp block at the worker (quietly: a dead connection drops it there too) and closes the file
   * unless it was detached. Harmless after a failure or a commit.
   */
  public void abort() {
    closeChannel();
    if (done) {
      return;
    }
    try {
      conn.call(ShortCircuitRequest.newBuilder().setAbort(AbortTempBlockProto.newBuilder().setBlockId(blockId))
          .build());
      finish();
    } catch (IOException e) {
      done = true;
      client.drop(conn);
    }
  }

  private void closeChannel() {
    if (channel != null && !detached) {
      try {
        channel.close();
      } catch (IOException ignored) {
        // nothing buffered: FileChannel writes go straight to the file
      }
    }
  }

  private ShortCircuitResponse callOrDrop(ShortCircuitRequest req, String what) throws IOException {
    if (done) {
      throw new IOException("Block " + blockId + " is no longer being written short-circuit");
    }
    try {
      return conn.call(req);
    } catch (IOException e) {
      done = true;
      client.drop(conn);
      throw new io.strata.common.exception.UnavailableException(what + " block " + blockId + " on worker " + worker
          + " failed: " + e.getMessage() + " (the worker drops the temp block)", e);
    }
  }

  private void finish() {
    if (!done) {
      done = true;
      client.release(worker, conn);
    }
  }
}
