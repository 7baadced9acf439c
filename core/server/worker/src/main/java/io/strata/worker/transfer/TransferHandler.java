package io.strata.worker.transfer;

import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.StrataException;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.TransferReadResponse;
import io.strata.worker.store.BlockStore;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One block transfer connection (strata_transfer.proto): decodes a read request, opens the block in the
 * store (a read lock: no eviction, move or removal while it is sent), answers with a header and then hands
 * the block file's range to the transport: by default as a file region, which the kernel sends (sendfile)
 * without the bytes entering the JVM, else as {@link BlockSends} writes it (strata.worker.transfer.send). The
 * read handle belongs to those writes from then on: it is closed when the last byte is written, or when the
 * connection ends first (Netty releases unwritten messages), so an open is tied to a live connection and a
 * client that dies leaks nothing.
 *
 * <p>Bad input (unparseable request, a frame past {@link TransferServer#MAX_REQUEST_BYTES}, UFS-read flags
 * this protocol does not serve, negative offsets) is answered with INVALID_ARGUMENT naming what was wrong
 * and the connection is closed; a request about an unknown block gets NOT_FOUND and the connection goes on.
 * A client may send its next request before the previous bytes arrived (they queue behind them), up to
 * {@link #MAX_PENDING} transfers at once; past that it is answered RESOURCE_EXHAUSTED and disconnected. A client
 * with more than {@link #MAX_REPLIES_QUEUED} error answers not yet taken (it is not reading) is disconnected.
 *
 * <p>Threading: Netty calls it from one executor thread per connection at a time (never the event loop:
 * opening may promote a block, which copies it); the pending count is also changed by write listeners on
 * the event loop, hence atomic.
 */
final class TransferHandler extends SimpleChannelInboundHandler<ByteBuf> {
  private static final Logger LOG = LoggerFactory.getLogger(TransferHandler.class);

  /** Most transfers one connection may have queued or in progress at once. */
  static final int MAX_PENDING = 4;

  private final BlockStore store;
  private final TransferServer.Counters counters;
  private final TransferServer.Send send;
  private final long mapWindow;
  /** Transfers answered but not yet completely written (each holds a block's read lock). */
  private final AtomicInteger pending = new AtomicInteger();
  /** Most answers without data (errors) one connection may have waiting to be written. */
  static final int MAX_REPLIES_QUEUED = 64;
  /** Answers without data written to the transport but not yet sent (changed by write listeners too). */
  private final AtomicInteger repliesQueued = new AtomicInteger();
  private final java.util.concurrent.atomic.AtomicBoolean cutOff = new java.util.concurrent.atomic.AtomicBoolean();

  TransferHandler(BlockStore store, TransferServer.Counters counters, TransferServer.Send send, long mapWindow) {
    this.store = store;
    this.counters = counters;
    this.send = send;
    this.mapWindow = mapWindow;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
    ReadBlockRequest req;
    try {
      req = ReadBlockRequest.parseFrom(new ByteBufInputStream(frame));
    } catch (InvalidProtocolBufferException e) {
      refuse(ctx, "the request is not a ReadBlockRequest (" + e.getMessage() + ")");
      return;
    } catch (IOException e) {
      refuse(ctx, "the request cannot be read (" + e + ")");
      return;
    }
    if (req.getUfsFallback() || req.getNoCache() || req.getUnlisted() || req.getUfsOnly()) {
      refuse(ctx, "block " + req.getBlockId() + ": the transfer protocol serves blocks this worker holds; reads "
          + "from the under file system (ufs_fallback, no_cache, unlisted, ufs_only) go through the data port");
      return;
    }
    if (req.getOffset() < 0 || req.getLength() < 0) {
      refuse(ctx, "block " + req.getBlockId() + ": offset " + req.getOffset() + " and length " + req.getLength()
          + " must not be negative");
      return;
    }
    if (pending.get() >= MAX_PENDING) {
      ctx.writeAndFlush(header(error(ErrorCode.RESOURCE_EXHAUSTED, "Block " + req.getBlockId() + ": " + MAX_PENDING
          + " transfers are already queued on this connection, the most one may have")))
          .addListener(ChannelFutureListener.CLOSE);
      return;
    }
    serve(ctx, req);
  }

  private void serve(ChannelHandlerContext ctx, ReadBlockRequest req) {
    long blockId = req.getBlockId();
    BlockStore.ReadHandle handle;
    try {
      BlockStore.BlockMeta meta = store.get(blockId);
      long start = req.getOffset();
      if (start > meta.length() || req.getLength() > meta.length() - start) {
        reply(ctx, error(ErrorCode.OUT_OF_RANGE, "Block " + blockId + " has " + meta.length()
            + " bytes; cannot read " + req.getLength() + " bytes at offset " + start));
        return;
      }
      handle = store.openForRead(blockId, req.getPromote());
    } catch (StrataException e) {
      reply(ctx, error(e.code(), e.getMessage()));
      return;
    } catch (IOException | RuntimeException e) {
      reply(ctx, error(ErrorCode.INTERNAL, "Cannot open block " + blockId + ": " + e));
      return;
    }
    long length = handle.meta().length();
    long start = req.getOffset();
    long end = start + req.getLength();
    TransferReadResponse.Builder header = TransferReadResponse.newBuilder().setBlockLength(length);
    if (start > length || end > length) {
      // Shorter on disk than when first looked up (a rewrite after a loss): say so as the lookup would.
      handle.close();
      reply(ctx, error(ErrorCode.OUT_OF_RANGE, "Block " + blockId + " has " + length + " bytes; cannot read "
          + req.getLength() + " bytes at offset " + start));
      return;
    }
    if (req.getChecksums() && end > start) {
      // Whole checksum chunks, so the reader can check every byte it is sent.
      start = ChunkChecksums.alignDown(start);
      end = ChunkChecksums.alignUp(end, length);
      int[] sums;
      try {
        sums = handle.checksums();
      } catch (StrataException e) {
        handle.close();
        reply(ctx, error(e.code(), e.getMessage()));
        return;
      } catch (IOException | RuntimeException e) {
        handle.close();
        reply(ctx, error(ErrorCode.DATA_LOSS, "Block " + blockId + ": its checksums cannot be read (" + e + ")"));
        return;
      }
      int first = ChunkChecksums.chunkOf(start);
      int last = ChunkChecksums.chunkCount(end);
      for (int i = first; i < last; i++) {
        header.addChunkCrc32C(sums[i]);
      }
    }
    long count = end - start;
    header.setOffset(start).setLength(count);
    counters.requests.incrementAndGet();
    if (count == 0) {
      handle.close();
      reply(ctx, header.build());
      return;
    }
    pending.incrementAndGet();
    counters.transfersNow.incrementAndGet();
    ctx.write(header(header.build()));
    // From here the writes own the handle: closed once the bytes are written, or with the connection.
    ChannelFuture written = switch (send) {
      case SENDFILE -> ctx.writeAndFlush(new HandleRegion(handle, start, count));
      case MMAP -> BlockSends.mapped(ctx, handle, start, count, mapWindow, counters);
    };
    written.addListener((ChannelFutureListener) f -> {
      pending.decrementAndGet();
      if (f.isSuccess()) {
        // counted before the transfer stops counting as in progress, so transfersNow() == 0 means the
        // figures are complete
        counters.bytesSent.addAndGet(count);
        counters.transfersNow.decrementAndGet();
        handle.served(count);
      } else {
        counters.transfersNow.decrementAndGet();
        // The block file shrank under us (a damaged dir) or the client went away: either way the stream is
        // out of step, so the connection ends; the client sees the bytes fall short.
        counters.errors.incrementAndGet();
        LOG.debug("Transfer of block {} to {} failed", blockId, f.channel().remoteAddress(), f.cause());
        f.channel().close();
      }
    });
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent) {
      IdleState state = ((IdleStateEvent) evt).state();
      if (state == IdleState.WRITER_IDLE && pending.get() > 0) {
        counters.stalled.incrementAndGet();
        LOG.info("Block transfer connection {} took no bytes for the stall timeout "
            + "(strata.worker.read.stream.stall.timeout); closing it and releasing its blocks",
            ctx.channel().remoteAddress());
        ctx.close();
      } else if (state == IdleState.ALL_IDLE && pending.get() == 0) {
        ctx.close(); // idle past strata.worker.transfer.idle.timeout: the client keeps none that long
      }
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof TooLongFrameException) {
      refuse(ctx, "a request frame is longer than " + TransferServer.MAX_REQUEST_BYTES + " bytes");
      return;
    }
    counters.errors.incrementAndGet();
    LOG.debug("Block transfer connection {} failed; closing it", ctx.channel().remoteAddress(), cause);
    ctx.close();
  }

  /** Answers INVALID_ARGUMENT and closes the connection: the stream can no longer be trusted. */
  private void refuse(ChannelHandlerContext ctx, String what) {
    LOG.warn("Refused a block transfer request from {}: {}; closing the connection", ctx.channel().remoteAddress(),
        what);
    ctx.writeAndFlush(header(error(ErrorCode.INVALID_ARGUMENT, "Bad block transfer request: " + what)))
        .addListener(ChannelFutureListener.CLOSE);
  }

  private void reply(ChannelHandlerContext ctx, TransferReadResponse resp) {
    if (repliesQueued.incrementAndGet() > MAX_REPLIES_QUEUED) {
      // A client that sends requests (say, of unknown blocks) and never reads the answers would have them queue
      // here without bound: it is cut off instead. A client that reads never gets near the bound.
      if (ctx.channel().isOpen() && cutOff.compareAndSet(false, true)) {
        counters.errors.incrementAndGet();
        LOG.warn("Block transfer client {} is not reading its answers ({} queued); closing the connection",
            ctx.channel().remoteAddress(), MAX_REPLIES_QUEUED);
        ctx.close();
      }
      repliesQueued.decrementAndGet();
      return;
    }
    ctx.writeAndFlush(header(resp)).addListener(f -> repliesQueued.decrementAndGet());
  }

  private TransferReadResponse error(ErrorCode code, String message) {
    counters.errors.incrementAndGet();
    return TransferReadResponse.newBuilder().setErrorCode(code.name()).setErrorMessage(message).build();
  }

  /** The header with its 4-byte length in front (the pipeline prepends nothing: regions go out raw). */
  private static ByteBuf header(TransferReadResponse resp) {
    byte[] bytes = resp.toByteArray();
    return Unpooled.buffer(4 + bytes.length).writeInt(bytes.length).writeBytes(bytes);
  }

  /**
   * A block file range whose release closes the block's read handle (and with it its channel and read
   * lock) instead of only the channel. A DefaultFileRegion, so the epoll transport sends it with sendfile.
   */
  private static final class HandleRegion extends DefaultFileRegion {
    private final BlockStore.ReadHandle handle;

    HandleRegion(BlockStore.ReadHandle handle, long position, long count) {
      super(handle.channel(), position, count);
      this.handle = handle;
    }

    @Override
    protected void deallocate() {
      handle.close();
    }
  }
}
