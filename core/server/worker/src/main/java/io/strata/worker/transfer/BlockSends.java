package io.strata.worker.transfer;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.FileRegion;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.internal.PlatformDependent;
import io.strata.worker.store.BlockStore;
import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;

/**
 * The way of putting a block file's range on a transfer connection other than sendfile
 * (strata.worker.transfer.send=mmap): {@link #mapped} writes the range from read-only mappings of it (the kernel
 * copies once from the page cache into the socket, as a plain write from a user buffer), one window of at most the
 * worker's read chunk size (strata.worker.read.chunk.size.max) at a time: a window is mapped when the transport
 * reaches it and unmapped as soon as its last byte is written, so a reader of a 1 GiB range has one window mapped,
 * not the range. The range is one message on the connection ({@link MappedRegion}), so whatever is written after it
 * (the next transfer's header) goes out after its last byte. The block's read handle (its read lock) is closed, and a
 * window still mapped unmapped, when the transport releases the message: written, failed, or the connection gone.
 * (Reading the range into pooled direct buffers and writing those was measured too, and won nothing:
 * docs/PERFORMANCE.md.)
 *
 * <p>Stateless; called on a connection's handler thread. The region's windows are mapped, written and unmapped on
 * the connection's event loop, which alone touches them.
 */
final class BlockSends {
  /** The smallest window mapped (a read chunk size set below it is taken as this). */
  static final long WINDOW_MIN = 64 << 10;

  private BlockSends() {}

  /**
   * Writes the range from mappings of at most {@code window} bytes, one at a time; the future of the write, the
   * handle closed once it completed, successfully or not.
   */
  static ChannelFuture mapped(ChannelHandlerContext ctx, BlockStore.ReadHandle handle, long start, long count,
      long window, TransferServer.Counters counters) {
    return ctx.writeAndFlush(new MappedRegion(handle, start, count, Math.max(WINDOW_MIN, window), counters));
  }

  /**
   * A block file range the transport writes window by window ({@link #transferTo}), each window a read-only mapping
   * unmapped once written; its release unmaps what is still mapped and closes the read handle. Not a
   * DefaultFileRegion, so no transport sends it with sendfile.
   */
  static final class MappedRegion extends AbstractReferenceCounted implements FileRegion {
    private final BlockStore.ReadHandle handle;
    private final long start;
    private final long count;
    private final long window;
    private final TransferServer.Counters counters;
    /** The window mapped now, or null; event loop only (released before any transfer, it is null). */
    private MappedByteBuffer map;
    /** The file position of {@link #map}'s first byte. */
    private long mapStart;
    private long transferred;

    MappedRegion(BlockStore.ReadHandle handle, long start, long count, long window,
        TransferServer.Counters counters) {
      this.handle = handle;
      this.start = start;
      this.count = count;
      this.window = window;
      this.counters = counters;
    }

    @Override
    public long position() {
      return start;
    }

    @Override
    @Deprecated
    public long transfered() {
      return transferred;
    }

    @Override
    public long transferred() {
      return transferred;
    }

    @Override
    public long count() {
      return count;
    }

    @Override
    public long transferTo(WritableByteChannel target, long position) throws IOException {
      long left = count - position;
      if (left <= 0) {
        return 0;
      }
      long at = start + position;
      if (map == null || at < mapStart || at >= mapStart + map.capacity()) {
        unmap();
        long size = Math.min(window, left);
        // Past the end of a file that shrank (a damaged dir) this fails: the write fails and the connection ends.
        map = handle.channel().map(FileChannel.MapMode.READ_ONLY, at, size);
        mapStart = at;
        counters.mapped(size);
      }
      map.position((int) (at - mapStart));
      int n = target.write(map);
      transferred = position + n;
      if (!map.hasRemaining()) {
        unmap();
      }
      return n;
    }

    private void unmap() {
      if (map != null) {
        long size = map.capacity();
        PlatformDependent.freeDirectBuffer(map);
        map = null;
        counters.unmapped(size);
      }
    }

    @Override
    protected void deallocate() {
      unmap();
      handle.close();
    }

    @Override
    public FileRegion retain() {
      super.retain();
      return this;
    }

    @Override
    public FileRegion retain(int increment) {
      super.retain(increment);
      return this;
    }

    @Override
    public FileRegion touch() {
      return this;
    }

    @Override
    public FileRegion touch(Object hint) {
      return this;
    }
  }
}
