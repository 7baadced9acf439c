package io.strata.worker.shortcircuit;

import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.unix.FileDescriptor;
import io.netty.handler.codec.TooLongFrameException;
import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.StrataException;
import io.strata.proto.ShortCircuitRequest;
import io.strata.proto.ShortCircuitResponse;
import io.strata.worker.store.BlockStore;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One short-circuit connection: decodes requests, opens and closes blocks in the store, answers, and
 * passes descriptors. It owns the read handles opened on its connection and closes every one when the
 * connection ends; the temp blocks written on it ({@link WriteSessions}) are dropped then too. A request that cannot be understood (bad protobuf, no operation, a frame past
 * {@link ShortCircuitServer#MAX_FRAME_BYTES}) is answered with INVALID_ARGUMENT naming what was wrong and
 * the connection is closed; a request about an unknown block gets NOT_FOUND and the connection goes on.
 *
 * <p>Threading: Netty calls it from one executor thread per connection at a time, so its state needs
 * no lock.
 */
final class ShortCircuitHandler extends SimpleChannelInboundHandler<ByteBuf> {
  private static final Logger LOG = LoggerFactory.getLogger(ShortCircuitHandler.class);

  private final BlockStore store;
  private final ShortCircuitServer.Counters counters;
  /** Blocks open on this connection; a block may be open more than once (several streams of one client). */
  private final Map<Long, Deque<BlockStore.ReadHandle>> open = new HashMap<>();
  /** Read handles in {@link #open}. */
  private int openCount;
  /** Most blocks one connection may hold open at once. */
  static final int MAX_OPEN_PER_CONNECTION = 64;
  /** Where commits wait for the master (the server's commit pool). */
  private final java.util.concurrent.Executor commits;
  /** Temp blocks written on this connection (short-circuit writes). */
  private final WriteSessions writes;

  /**
   * Descriptors handed to Netty to send and not yet written to the socket; each holds its file open here. The
   * protocol is lockstep (a client takes each answer before it asks again), so a client with
   * {@link #MAX_FDS_QUEUED} waiting is not taking them, and {@link #notReading} closes its connection; as it
   * does when the outbound buffer is past its high water mark (answers the client does not read, such as
   * checksum lists many times the size of their requests). Counted on this handler's thread, uncounted on the
   * channel's event loop when the write completes.
   */
  private final AtomicInteger fdsQueued = new AtomicInteger();
  static final int MAX_FDS_QUEUED = 4;
  /** Set once {@link #notReading} has closed the connection: later requests are dropped unlogged. */
  private final AtomicBoolean cutOff = new AtomicBoolean();
  /** Which block files are on a memory file system (shared by the server's connections). */
  private final MemoryFileSystems memory;

  ShortCircuitHandler(BlockStore store, io.strata.worker.rpc.Committer committer,
      ShortCircuitServer.Counters counters, java.util.concurrent.Executor commits, MemoryFileSystems memory) {
    this.commits = commits;
    this.memory = memory;
    this.store = store;
    this.counters = counters;
    this.writes = new WriteSessions(store, committer, counters);
  }

  /** One write operation: its answer, or a StrataException naming what was refused. */
  @FunctionalInterface
  private interface WriteOp {
    ShortCircuitResponse run() throws IOException;
  }

  private void answer(ChannelHandlerContext ctx, WriteOp op) {
    try {
      reply(ctx, op.run());
    } catch (StrataException e) {
      error(ctx, e.code(), e.getMessage());
    } catch (IOException | RuntimeException e) {
      LOG.warn("Short-circuit write request failed", e);
      error(ctx, ErrorCode.INTERNAL, "Short-circuit write request failed: " + e);
    }
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
    ShortCircuitRequest req;
    int size = frame.readableBytes();
    try {
      req = ShortCircuitRequest.parseFrom(new ByteBufInputStream(frame));
    } catch (IOException e) {
      refuse(ctx, "The short-circuit request of " + size + " bytes is not a valid "
          + "ShortCircuitRequest: " + e.getMessage());
      return;
    }
    switch (req.getOpCase()) {
      case OPEN:
        open(ctx, req.getOpen().getBlockId(), req.getOpen().getPromote(), req.getOpen().getWithChecksums(),
            req.getOpen().getInlineMax());
        break;
      case SEND_FD:
        sendFd(ctx, req.getSendFd().getBlockId(), req.getSendFd().getWrite());
        break;
      case CLOSE:
        closeBlock(ctx, req.getClose().getBlockId());
        break;
      case GET_CHECKSUMS:
        checksums(ctx, req.getGetChecksums());
        break;
      case CREATE:
        answer(ctx, () -> writes.create(req.getCreate()));
        break;
      case GRANT:
        answer(ctx, () -> writes.grant(req.getGrant()));
        break;
      case COMMIT:
        commit(ctx, req);
        break;
      case ABORT:
        answer(ctx, () -> writes.abort(req.getAbort()));
        break;
      default:
        refuse(ctx, "The short-circuit request names no operation (open, send_fd, close, get_checksums, create, "
            + "grant, commit or abort)");
    }
  }

  /**
   * COMMIT: the master's part runs on the server's commit pool, so a slow master holds up only this
   * connection (whose client waits for the answer anyway), not every connection sharing its handler thread.
   */
  private void commit(ChannelHandlerContext ctx, ShortCircuitRequest req) {
    WriteSessions.PreparedCommit rest;
    try {
      rest = writes.prepareCommit(req.getCommit());
    } catch (StrataException e) {
      error(ctx, e.code(), e.getMessage());
      return;
    } catch (IOException | RuntimeException e) {
      LOG.warn("Short-circuit commit failed", e);
      error(ctx, ErrorCode.INTERNAL, "Short-circuit write request failed: " + e);
      return;
    }
    try {
      commits.execute(() -> answer(ctx, rest::run));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // The queue is full (clients not waiting for their answers) or the server closes: never the master call
      // on this handler thread, which other connections share. The writer writes the block elsewhere.
      rest.abort();
      counters.errors.incrementAndGet();
      error(ctx, ErrorCode.UNAVAILABLE, "Cannot commit block " + req.getCommit().getBlockId() + " now: the "
          + "worker's short-circuit commit queue is full or it is stopping; the temp block is dropped, write the "
          + "block again");
    }
  }

  /** Most bytes an OPEN answer carries inline (the rest of a frame holds its checksums and fields). */
  static final int MAX_INLINE_BYTES = 32 * 1024;

  private void open(ChannelHandlerContext ctx, long blockId, boolean promote, boolean withChecksums, int inlineMax) {
    if (openCount >= MAX_OPEN_PER_CONNECTION) {
      // Each open holds a descriptor and a read lock that delays the block's removal: a client closes what
      // it is done with (Strata's own keeps one block open per connection).
      error(ctx, ErrorCode.RESOURCE_EXHAUSTED, "Cannot open block " + blockId + ": " + openCount + " blocks are "
          + "open on this short-circuit connection, the most one may hold (" + MAX_OPEN_PER_CONNECTION + ")");
      return;
    }
    BlockStore.ReadHandle handle;
    try {
      handle = store.openForRead(blockId, promote);
    } catch (StrataException e) {
      error(ctx, e.code(), e.getMessage());
      return;
    } catch (IOException | RuntimeException e) {
      error(ctx, ErrorCode.INTERNAL, "Cannot open block " + blockId + ": " + e);
      return;
    }
    if (inlineMax > 0 && handle.meta().length() <= Math.min(inlineMax, MAX_INLINE_BYTES)
        && inline(ctx, handle, blockId, withChecksums)) {
      return;
    }
    String path;
    boolean inMemory;
    try {
      path = handle.path().toAbsolutePath().toString();
      inMemory = memory.holds(handle.path());
    } catch (UnsupportedOperationException e) {
      handle.close();
      error(ctx, ErrorCode.FAILED_PRECONDITION, e.getMessage());
      return;
    }
    open.computeIfAbsent(blockId, id -> new ArrayDeque<>()).push(handle);
    openCount++;
    counters.opens.incrementAndGet();
    counters.openNow.incrementAndGet();
    BlockStore.BlockMeta meta = handle.meta();
    // The client reads the file itself: what is counted is the block opened, not the bytes it then reads.
    handle.served(meta.length());
    counters.bytesOpened.addAndGet(meta.length());
    ShortCircuitResponse.Builder r = ShortCircuitResponse.newBuilder().setLength(meta.length()).setTier(meta.tier())
        .setPath(path).setMemoryBacked(inMemory);
    if (withChecksums) {
      addChecksums(r, handle, blockId);
    }
    reply(ctx, r.build());
  }

  /**
   * Answers an OPEN of a small block with its bytes (and checksums) and closes it again at once: the read lock is
   * held only while its bytes are read here, never across the answer. False, with nothing sent and the handle
   * still open, when the checksums asked for cannot be had: the block is then opened as usual, and the client's
   * GET_CHECKSUMS gets the reason (the block is not taken for corrupt over a sidecar that could not be read).
   */
  private boolean inline(ChannelHandlerContext ctx, BlockStore.ReadHandle handle, long blockId,
      boolean withChecksums) {
    int[] sums = null;
    if (withChecksums) {
      try {
        sums = handle.checksums();
      } catch (IOException | RuntimeException e) {
        LOG.debug("No checksums of block {} for an inline answer: {}; opening it as usual", blockId, e.toString());
        return false;
      }
    }
    ShortCircuitResponse r;
    try {
      BlockStore.BlockMeta meta = handle.meta();
      byte[] data = new byte[(int) meta.length()];
      java.nio.ByteBuffer buf = java.nio.ByteBuffer.wrap(data);
      java.nio.channels.FileChannel ch = handle.channel();
      while (buf.hasRemaining()) {
        if (ch.read(buf, buf.position()) < 0) {
          throw new IOException("block " + blockId + " ends at " + buf.position() + " of its " + data.length + " bytes");
        }
      }
      ShortCircuitResponse.Builder b = ShortCircuitResponse.newBuilder().setLength(meta.length()).setTier(meta.tier())
          .setInlined(true).setData(com.google.protobuf.UnsafeByteOperations.unsafeWrap(data));
      if (sums != null) {
        addChecksums(b, sums);
      }
      handle.served(meta.length());
      r = b.build();
    } catch (IOException | RuntimeException e) {
      counters.errors.incrementAndGet();
      error(ctx, ErrorCode.INTERNAL, "Cannot read block " + blockId + " for an inline answer: " + e);
      return true;
    } finally {
      handle.close();
    }
    counters.opens.incrementAndGet();
    counters.inlined.incrementAndGet();
    counters.bytesOpened.addAndGet(r.getLength());
    reply(ctx, r);
    return true;
  }

  /**
   * The first {@link #MAX_CHECKSUMS} stored checksums of an opened block, for an OPEN that asked for them; none
   * when they cannot be had (the client's GET_CHECKSUMS then gets the reason as its answer).
   */
  private static void addChecksums(ShortCircuitResponse.Builder r, BlockStore.ReadHandle handle, long blockId) {
    int[] sums;
    try {
      sums = handle.checksums();
    } catch (IOException | RuntimeException e) {
      LOG.debug("No checksums of block {} for its OPEN answer: {}", blockId, e.toString());
      return;
    }
    addChecksums(r, sums);
  }

  /** The first {@link #MAX_CHECKSUMS} of {@code sums}, from chunk 0, and their chunk size. */
  private static void addChecksums(ShortCircuitResponse.Builder r, int[] sums) {
    int n = Math.min(sums.length, MAX_CHECKSUMS);
    for (int i = 0; i < n; i++) {
      r.addChunkCrc32C(sums[i]);
    }
    r.setBytesPerChecksum(io.strata.common.checksum.ChunkChecksums.CHUNK_BYTES);
  }

  private void sendFd(ChannelHandlerContext ctx, long blockId, boolean write) {
    if (notReading(ctx)) {
      return;
    }
    Deque<BlockStore.ReadHandle> handles = write ? null : open.get(blockId);
    OpenFiles.Opened file;
    try {
      file = write ? writes.openForWrite(blockId) : handles == null ? null : OpenFiles.openReadOnly(handles.peek().path());
    } catch (IOException e) {
      counters.errors.incrementAndGet();
      LOG.warn("Cannot open block {} to pass its descriptor: {}; closing the connection", blockId, e.toString());
      ctx.close();
      return;
    }
    if (file == null) {
      // The client waits for a descriptor, not a message: it cannot be answered in band, so it is dropped.
      counters.errors.incrementAndGet();
      LOG.warn("Short-circuit client {} asked for the descriptor of block {}, which it has not {}; closing "
          + "the connection", ctx.channel().remoteAddress(), blockId, write ? "created" : "opened");
      ctx.close();
      return;
    }
    counters.fdsSent.incrementAndGet();
    // The kernel duplicates the descriptor into the client on send; ours is closed once it is sent. The
    // FileDescriptor wrapper is never closed itself: the stream owns the number.
    fdsQueued.incrementAndGet();
    ctx.writeAndFlush(new FileDescriptor(file.fd())).addListener((ChannelFutureListener) f -> {
      try {
        file.file().close();
      } catch (IOException ignored) {
        // nothing to do: this side wrote nothing through it
      }
      fdsQueued.decrementAndGet();
      if (!f.isSuccess()) {
        LOG.debug("Passing the descriptor of block {} failed", blockId, f.cause());
        f.channel().close();
      }
    });
  }

  /** Answers with the stored checksums of an open block, at most {@link #MAX_CHECKSUMS} per frame. */
  private void checksums(ChannelHandlerContext ctx, io.strata.proto.GetChecksumsProto req) {
    Deque<BlockStore.ReadHandle> handles = open.get(req.getBlockId());
    if (handles == null) {
      error(ctx, ErrorCode.FAILED_PRECONDITION, "Block " + req.getBlockId() + " is not open on this connection");
      return;
    }
    int[] sums;
    try {
      sums = handles.peek().checksums();
    } catch (StrataException e) {
      error(ctx, e.code(), e.getMessage());
      return;
    } catch (IOException | RuntimeException e) {
      error(ctx, ErrorCode.INTERNAL, "Cannot read the checksums of block " + req.getBlockId() + ": " + e);
      return;
    }
    int first = req.getFirstChunk();
    if (first < 0 || req.getCount() < 0 || first > sums.length) {
      error(ctx, ErrorCode.INVALID_ARGUMENT, "Block " + req.getBlockId() + " has " + sums.length
          + " checksum chunks; cannot send " + req.getCount() + " from chunk " + first);
      return;
    }
    int n = Math.min(Math.min(req.getCount(), sums.length - first), MAX_CHECKSUMS);
    ShortCircuitResponse.Builder r = ShortCircuitResponse.newBuilder()
        .setBytesPerChecksum(io.strata.common.checksum.ChunkChecksums.CHUNK_BYTES);
    for (int i = first; i < first + n; i++) {
      r.addChunkCrc32C(sums[i]);
    }
    reply(ctx, r.build());
  }

  /** Checksums per GET_CHECKSUMS answer: 32 KiB of them, well inside a 64 KiB frame. */
  static final int MAX_CHECKSUMS = 8192;

  private void closeBlock(ChannelHandlerContext ctx, long blockId) {
    Deque<BlockStore.ReadHandle> handles = open.get(blockId);
    if (handles == null) {
      error(ctx, ErrorCode.FAILED_PRECONDITION, "Block " + blockId + " is not open on this connection");
      return;
    }
    handles.pop().close();
    openCount--;
    counters.openNow.decrementAndGet();
    if (handles.isEmpty()) {
      open.remove(blockId);
    }
    reply(ctx, ShortCircuitResponse.getDefaultInstance());
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    writes.abortAll();
    List<BlockStore.ReadHandle> all = new ArrayList<>();
    open.values().forEach(all::addAll);
    open.clear();
    openCount = 0;
    for (BlockStore.ReadHandle h : all) {
      h.close();
      counters.openNow.decrementAndGet();
    }
    if (!all.isEmpty()) {
      LOG.debug("Short-circuit connection ended with {} blocks open; released them", all.size());
    }
    // Not passed on: this is the last handler, and the tail runs on the event loop, which may be gone
    // when the server shuts down.
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof TooLongFrameException) {
      refuse(ctx, "The short-circuit request is longer than " + ShortCircuitServer.MAX_FRAME_BYTES
          + " bytes: " + cause.getMessage());
    } else if (cause instanceof InvalidProtocolBufferException) {
      refuse(ctx, "The short-circuit request is not a valid ShortCircuitRequest: " + cause.getMessage());
    } else {
      counters.errors.incrementAndGet();
      LOG.debug("Short-circuit connection {} failed", ctx.channel().remoteAddress(), cause);
      ctx.close();
    }
  }

  /** Answers a request that could not be understood, then closes the connection. */
  private void refuse(ChannelHandlerContext ctx, String message) {
    counters.errors.incrementAndGet();
    LOG.warn("Short-circuit client {}: {}", ctx.channel().remoteAddress(), message);
    ctx.writeAndFlush(frame(ShortCircuitResponse.newBuilder().setErrorCode(ErrorCode.INVALID_ARGUMENT.name())
        .setErrorMessage(message).build())).addListener(ChannelFutureListener.CLOSE);
  }

  private void error(ChannelHandlerContext ctx, ErrorCode code, String message) {
    counters.errors.incrementAndGet();
    reply(ctx, ShortCircuitResponse.newBuilder().setErrorCode(code.name()).setErrorMessage(message).build());
  }

  private void reply(ChannelHandlerContext ctx, ShortCircuitResponse resp) {
    if (notReading(ctx)) {
      return;
    }
    ctx.writeAndFlush(frame(resp));
  }

  /**
   * Whether the client is not taking what it was sent (its answers past the outbound high water mark, or
   * {@link #MAX_FDS_QUEUED} descriptors not yet written): then its connection is closed, which releases every
   * block it holds, rather than queueing without bound. A lockstep client never gets here.
   */
  private boolean notReading(ChannelHandlerContext ctx) {
    if (ctx.channel().isWritable() && fdsQueued.get() < MAX_FDS_QUEUED) {
      return false;
    }
    if (ctx.channel().isOpen() && cutOff.compareAndSet(false, true)) {
      counters.errors.incrementAndGet();
      LOG.warn("Short-circuit client {} is not reading its answers ({} descriptors waiting to be sent, answers "
          + "past the outbound high water mark: {}); closing the connection", ctx.channel().remoteAddress(),
          fdsQueued.get(), !ctx.channel().isWritable());
      ctx.close();
    }
    return true;
  }

  private static ByteBuf frame(ShortCircuitResponse resp) {
    return Unpooled.wrappedBuffer(resp.toByteArray());
  }
}
