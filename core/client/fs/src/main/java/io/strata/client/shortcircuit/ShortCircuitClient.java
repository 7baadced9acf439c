package io.strata.client.shortcircuit;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.DomainSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Short-circuit reads and writes for one client. Reads: opens blocks of workers on this host over their
 * domain sockets and hands back a {@link FileChannel} on the block's file, either the descriptor the worker passed
 * ({@link Mode#FD}, reopened through {@code /proc/self/fd}, so the worker's dirs need not be visible
 * here) or the file the worker names ({@link Mode#PATH}). The worker keeps the block read-locked until
 * {@link OpenBlock#close()} or until the connection ends.
 *
 * Writes ({@link #create}, {@link ShortCircuitWrite}): the worker creates a temp block and grants space,
 * this client writes the file through the passed descriptor (or the named path) and commits.
 *
 * <p>It never fails a read: when short-circuit is not possible {@link #open} returns null and the caller
 * streams through the worker's data port; each distinct reason is logged once (and kept for
 * {@link #fallbackReasons()}). A connection serves one open block at a time (the protocol is lockstep),
 * so no thread waits for the worker under a lock: an open takes an idle connection to the worker or
 * makes one, keeps it while the block is open, and gives it back on close.
 *
 * <p>Thread-safe.
 */
public final class ShortCircuitClient implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ShortCircuitClient.class);

  /** How blocks are handed over. */
  public enum Mode { FD, PATH, OFF }

  private final Mode mode;
  private final String socketPathTemplate;
  private final long timeoutMs;
  /** Idle connections per worker; a connection in use belongs to the one block open on it. */
  private final Map<WorkerAddress, java.util.ArrayDeque<ShortCircuitConnection>> idle = new HashMap<>();
  private final java.util.Set<ShortCircuitConnection> all = java.util.concurrent.ConcurrentHashMap.newKeySet();
  static final int FALLBACK_REASONS_KEPT = 100;
  private final List<String> fallbackReasons = new ArrayList<>();
  private final java.util.Set<String> loggedKinds = new java.util.HashSet<>();
  private final AtomicLong opens = new AtomicLong();
  private final AtomicLong inlined = new AtomicLong();
  private final AtomicLong chunksVerifiedAhead = new AtomicLong();
  final AtomicLong writesCreated = new AtomicLong();
  private final MappedReads mappedReads;
  private EventLoopGroup group;
  private boolean closed;

  /** A client whose reads of blocks on a memory file system map them or not as measured ({@link MappedReads}). */
  public ShortCircuitClient(Mode mode, String socketPathTemplate, long timeoutMs) {
    this(mode, socketPathTemplate, timeoutMs, MappedReads.Mode.AUTO);
  }

  public ShortCircuitClient(Mode mode, String socketPathTemplate, long timeoutMs, MappedReads.Mode mapped) {
    this.mode = mode;
    this.socketPathTemplate = socketPathTemplate;
    this.timeoutMs = timeoutMs;
    this.mappedReads = new MappedReads(mapped);
  }

  /** Whether this client's reads of blocks on a memory file system go through mappings, and why. */
  public MappedReads mappedReads() {
    return mappedReads;
  }

  public Mode mode() {
    return mode;
  }

  /** The domain socket of the worker with this data port. */
  public Path socketPath(WorkerAddress worker) {
    return Path.of(socketPathTemplate.replace("${strata.worker.rpc.port}", Integer.toString(worker.rpcPort())));
  }

  /**
   * Opens a block of a worker on this host, or returns null (the reason logged once) when it cannot be
   * read short-circuit: turned off, no socket, the worker does not hold it, the descriptor or path cannot
   * be opened here.
   */
  public OpenBlock open(WorkerAddress worker, long blockId, boolean promote) {
    return open(worker, blockId, promote, 0);
  }

  /**
   * As above; a block of at most {@code inlineMax} bytes may come back with its bytes in the answer
   * ({@link OpenBlock#inline()}): nothing is then left open at the worker, and the block has no channel.
   */
  public OpenBlock open(WorkerAddress worker, long blockId, boolean promote, int inlineMax) {
    if (mode == Mode.OFF) {
      return null;
    }
    ShortCircuitConnection conn;
    try {
      conn = connection(worker);
    } catch (IOException e) {
      fallback("connect:" + worker, "Short-circuit to worker " + worker + " is not possible: cannot connect to "
          + socketPath(worker) + " (" + e.getMessage() + "); reading through its data port");
      return null;
    }
    ShortCircuitConnection.Opened opened;
    try {
      opened = conn.open(blockId, promote, inlineMax);
    } catch (IOException e) {
      drop(conn);
      fallback("io:" + worker, "Short-circuit to worker " + worker + " failed (" + e.getMessage()
          + "); reading through its data port");
      return null;
    }
    if (opened.errorCode() != null) {
      // NOT_FOUND and the like: the data port path gives the caller its usual answer (UFS fallback etc.).
      LOG.debug("Short-circuit open of block {} on {} refused: {} {}", blockId, worker, opened.errorCode(),
          opened.errorMessage());
      release(worker, conn);
      return null;
    }
    if (opened.inline() != null) {
      release(worker, conn); // nothing is open on it
      opens.incrementAndGet();
      inlined.incrementAndGet();
      return new OpenBlock(this, worker, null, blockId, opened.length(), opened.tier(), false, null, opened.sums(),
          opened.inline());
    }
    FileChannel ch;
    try {
      ch = mode == Mode.FD ? conn.receiveDescriptor(blockId) : openPath(opened.path());
    } catch (IOException e) {
      String how = mode == Mode.FD ? "by descriptor" : "by path " + opened.path();
      fallback(mode + ":" + worker, "Short-circuit " + mode.name().toLowerCase() + " mode cannot open block "
          + blockId + " of worker " + worker + " " + how + ": " + e + "; reading through its data port");
      if (mode == Mode.FD) {
        drop(conn); // the descriptor exchange left the connection in an unknown state
      } else {
        conn.closeQuietly(blockId);
        release(worker, conn);
      }
      return null;
    }
    opens.incrementAndGet();
    return new OpenBlock(this, worker, conn, blockId, opened.length(), opened.tier(), opened.memoryBacked(), ch,
        opened.sums(), null);
  }

  /**
   * Starts writing a block short-circuit to a worker on this host: the worker creates a temp block
   * (taking the whole-block reservation ReserveBlock made when {@code reserved}) with {@code initialGrant}
   * bytes granted, and this client opens its file for writing. Returns null (the reason logged once) when
   * that is not possible, so the caller streams; throws the worker store's refusal (RESOURCE_EXHAUSTED
   * when it has no room), which streaming would get too.
   */
  public ShortCircuitWrite create(WorkerAddress worker, long blockId, long maxLength, boolean reserved,
      long initialGrant) throws io.strata.common.exception.StrataException {
    if (mode == Mode.OFF) {
      return null;
    }
    return ShortCircuitWrite.create(this, worker, blockId, maxLength, reserved, initialGrant);
  }

  /** Blocks created for writing short-circuit so far. */
  public long writesCreated() {
    return writesCreated.get();
  }

  private static FileChannel openPath(String path) throws IOException {
    return FileChannel.open(Path.of(path), StandardOpenOption.READ);
  }

  /** An idle connection to the worker, or a new one (connected without holding this client's lock). */
  ShortCircuitConnection connection(WorkerAddress worker) throws IOException {
    EventLoopGroup g;
    synchronized (this) {
      if (closed) {
        throw new IOException("the client is closed");
      }
      java.util.ArrayDeque<ShortCircuitConnection> q = idle.get(worker);
      while (q != null && !q.isEmpty()) {
        ShortCircuitConnection c = q.pop();
        if (c.isActive()) {
          return c;
        }
        all.remove(c);
      }
      if (group == null && Epoll.isAvailable()) {
        group = new MultiThreadIoEventLoopGroup(1, daemon("strata-client-sc"), EpollIoHandler.newFactory());
      }
      g = group;
    }
    Path path = socketPath(worker);
    if (!Files.exists(path)) {
      throw new IOException("no such socket file");
    }
    if (g == null) {
      throw new IOException("Netty epoll is not available: " + Epoll.unavailabilityCause());
    }
    ShortCircuitConnection.Inbox inbox = new ShortCircuitConnection.Inbox();
    io.netty.channel.Channel ch;
    try {
      ch = new Bootstrap().group(g).channel(EpollDomainSocketChannel.class)
          .handler(new ChannelInitializer<DomainSocketChannel>() {
            @Override
            protected void initChannel(DomainSocketChannel c) {
              c.pipeline().addLast(new LengthFieldBasedFrameDecoder(1 << 20, 0, 4, 0, 4))
                  .addLast(new LengthFieldPrepender(4)).addLast(inbox);
            }
          })
          .connect(new DomainSocketAddress(path.toFile())).sync().channel();
    } catch (Exception e) {
      throw new IOException(e.getMessage(), e);
    }
    ShortCircuitConnection c = new ShortCircuitConnection(ch, inbox, timeoutMs);
    all.add(c);
    return c;
  }

  /** Gives a connection with nothing open on it back for the next open. */
  void release(WorkerAddress worker, ShortCircuitConnection conn) {
    synchronized (this) {
      if (!closed && conn.isActive()) {
        idle.computeIfAbsent(worker, w -> new java.util.ArrayDeque<>()).push(conn);
        return;
      }
    }
    drop(conn);
  }

  void drop(ShortCircuitConnection conn) {
    all.remove(conn);
    conn.close();
  }

  void fallback(String kind, String reason) {
    synchronized (this) {
      if (fallbackReasons.size() == FALLBACK_REASONS_KEPT) {
        fallbackReasons.remove(0); // a long-lived client keeps the recent ones only
      }
      fallbackReasons.add(reason);
      if (!loggedKinds.add(kind)) {
        return;
      }
    }
    LOG.warn(reason);
  }

  /**
   * The last {@value #FALLBACK_REASONS_KEPT} reasons a read or write fell back to the data port, oldest first
   * (each kind is logged only once).
   */
  public synchronized List<String> fallbackReasons() {
    return List.copyOf(fallbackReasons);
  }

  /** Blocks opened short-circuit so far. */
  public long opens() {
    return opens.get();
  }

  /** Of those, the small blocks whose bytes came in the open's answer. */
  public long inlined() {
    return inlined.get();
  }

  /**
   * Checksum chunks of blocks opened ahead that the open-ahead thread matched against their stored checksums
   * ({@link BlockMapping#verifyAhead}), so far.
   */
  public long chunksVerifiedAhead() {
    return chunksVerifiedAhead.get();
  }

  /** Counts {@code n} chunks verified ahead. */
  public void verifiedAhead(int n) {
    chunksVerifiedAhead.addAndGet(n);
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  @Override
  public void close() {
    EventLoopGroup g;
    synchronized (this) {
      closed = true;
      idle.clear();
      g = group;
      group = null;
    }
    // Connections of blocks still open end too: the worker releases their locks.
    new ArrayList<>(all).forEach(this::drop);
    if (g != null) {
      g.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  /**
   * A block open short-circuit: read its {@link #channel()} (positioned reads); close once to release the
   * worker's read lock. A small block may instead have come whole in the open's answer ({@link #inline()}): it
   * has no channel, mapping or connection, and holds nothing at the worker. Not thread-safe for close; the
   * channel may be read from any thread.
   */
  public static final class OpenBlock implements AutoCloseable {
    private final ShortCircuitClient client;
    private final WorkerAddress worker;
    private final ShortCircuitConnection conn;
    private final long blockId;
    private final long length;
    private final String tier;
    private final boolean memoryBacked;
    private final FileChannel channel;
    /** Stored checksums from chunk 0 that came with the OPEN answer (null: none came). */
    private final int[] sentSums;
    /** The block's bytes when they came in the OPEN answer (then channel and conn are null); else null. */
    private final byte[] inline;
    /** Guarded by this: set once by {@link #close}. */
    private boolean closed;
    /** Guarded by this: the block's file mapped by the first {@link #mapping()}; null until then or unmappable. */
    private BlockMapping mapping;
    private boolean mapTried;
    /** Guarded by this: whether reads go through {@link #mapping()}, decided by the first {@link #readMapped()}. */
    private Boolean readMapped;

    OpenBlock(ShortCircuitClient client, WorkerAddress worker, ShortCircuitConnection conn, long blockId,
        long length, String tier, boolean memoryBacked, FileChannel channel, int[] sentSums, byte[] inline) {
      this.client = client;
      this.worker = worker;
      this.conn = conn;
      this.blockId = blockId;
      this.length = length;
      this.tier = tier;
      this.memoryBacked = memoryBacked;
      this.channel = channel;
      this.sentSums = sentSums;
      this.inline = inline;
    }

    /** The block's bytes, when they came in the open's answer (read-only for callers); else null. */
    public byte[] inline() {
      return inline;
    }

    public long blockId() {
      return blockId;
    }

    public long length() {
      return length;
    }

    public String tier() {
      return tier;
    }

    /**
     * Whether the worker said the block's file is on a memory file system (tmpfs, ramfs): the only files read
     * through a mapping, whatever the tier is called (a worker too old to say counts as no).
     */
    public boolean memoryBacked() {
      return memoryBacked;
    }

    public FileChannel channel() {
      return channel;
    }

    /**
     * The worker's stored checksums of chunks [first, first + count) of this block: those the OPEN answer
     * carried, else fetched over the domain socket (one call per few thousand); DATA_LOSS when the worker
     * has none for its copy.
     */
    public int[] checksums(int first, int count) throws IOException {
      boolean isClosed;
      synchronized (this) {
        isClosed = closed;
      }
      if (isClosed) {
        throw new IOException("block " + blockId + " is closed");
      }
      if (sentSums != null && first >= 0 && count >= 0 && first + count <= sentSums.length) {
        return java.util.Arrays.copyOfRange(sentSums, first, first + count);
      }
      if (conn == null) {
        throw new io.strata.common.exception.DataLossException("worker " + worker + " sent no checksums with block "
            + blockId + " (its copy has none)");
      }
      return conn.checksums(blockId, first, count);
    }

    /**
     * Whether this block is read through its {@link #mapping()} rather than its channel: only a block on a memory
     * file system, as the client's {@link MappedReads} decides (on the first call; later calls give the same).
     */
    public boolean readMapped() {
      if (inline != null) {
        return false;
      }
      synchronized (this) {
        if (readMapped != null) {
          return readMapped;
        }
      }
      boolean m = client.mappedReads.use(this); // may probe the file: no lock held
      synchronized (this) {
        if (readMapped == null) {
          readMapped = m;
        }
        return readMapped;
      }
    }

    /**
     * The block's file mapped read-only ({@link BlockMapping}), made on the first call; null when it cannot be
     * mapped or the block is closed (read {@link #channel()} then). Closing the block releases the mapping.
     */
    public synchronized BlockMapping mapping() {
      if (!mapTried && !closed && inline == null) {
        mapTried = true;
        mapping = BlockMapping.map(channel, length, blockId);
      }
      return closed ? null : mapping;
    }

    @Override
    public void close() {
      BlockMapping m;
      synchronized (this) {
        if (closed) {
          return;
        }
        closed = true;
        m = mapping;
      }
      if (m != null) {
        m.close();
      }
      if (inline != null) {
        return; // nothing open at the worker
      }
      try {
        channel.close();
      } catch (IOException ignored) {
        // read-only
      }
      conn.closeQuietly(blockId);
      client.release(worker, conn);
    }
  }
}
