package io.strata.client.transfer;

import io.strata.common.exception.DeadlineExceededException;
import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.TransferReadResponse;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client side of the block transfer protocol (strata_transfer.proto): block reads from a worker's
 * transfer port, or its transfer domain socket when the worker is on this host, outside gRPC. The caller's
 * thread does all the work (no event loop, no hand-off): it writes the request, reads the header and then
 * pulls the raw bytes straight from the socket, so a block costs the kernel's copy and one more into the
 * reader's buffer.
 *
 * <p>Connections: opened on first use; one that finished its read cleanly is kept for the next read from
 * the same worker (at most {@code idlePerWorker} per worker, each for at most {@code idleMs}: less than the
 * worker's own idle timeout); one abandoned mid-read is closed. A kept connection the worker closed in the
 * meantime is noticed when the request is sent or its answer does not come, and the request goes once more
 * on a new one. Every wait (connect, header, bytes) is bounded by {@code timeoutMs}: DEADLINE_EXCEEDED.
 *
 * <p>Thread-safe: the pool is locked briefly; each {@link Read} belongs to one thread.
 */
public final class TransferClient implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TransferClient.class);
  /** Longest response header accepted (the checksums of a 1 GiB block take 80 KiB). */
  static final int MAX_HEADER_BYTES = 1 << 20;
  /** Each connection's read buffer: what a reader pulls from the socket at once. */
  public static final int BUFFER_BYTES = 1 << 20;
  /**
   * Most unread bytes a closed read drains to keep its connection (the tail of a range widened to whole
   * checksum chunks is under 64 KiB); past this the connection is closed instead.
   */
  static final int DRAIN_MAX_BYTES = 256 << 10;

  private final boolean domainSocket;
  private final String socketTemplate;
  private final Predicate<WorkerAddress> onThisHost;
  private final long timeoutMs;
  private final int idlePerWorker;
  private final long idleNanos;
  private final LongSupplier nanoClock;
  /** Idle connections per worker, newest last; guarded by itself. */
  private final Map<WorkerAddress, Deque<Connection>> idle = new HashMap<>();
  /** Workers whose transfer domain socket was not usable: the reason, logged once. */
  private final Map<WorkerAddress, String> tcpOnly = new ConcurrentHashMap<>();
  private volatile boolean closed;
  private final java.util.concurrent.atomic.AtomicLong opened = new java.util.concurrent.atomic.AtomicLong();

  /**
   * @param domainSocket reach workers on this host over their transfer domain socket
   * @param socketTemplate the socket's path, with {@code ${strata.worker.rpc.port}} for the worker's port
   * @param onThisHost whether a worker runs on this host
   */
  public TransferClient(boolean domainSocket, String socketTemplate, Predicate<WorkerAddress> onThisHost,
      long timeoutMs, int idlePerWorker, long idleMs, LongSupplier nanoClock) {
    this.domainSocket = domainSocket;
    this.socketTemplate = socketTemplate;
    this.onThisHost = onThisHost;
    this.timeoutMs = timeoutMs;
    this.idlePerWorker = idlePerWorker;
    this.idleNanos = idleMs * 1_000_000L;
    this.nanoClock = nanoClock;
  }

  /** A failure to reach the worker's transfer service at all (before any answer): the data port may still work. */
  public static final class NotReached extends IOException {
    NotReached(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * Sends {@code req} to the worker and reads its answer's header. The worker's refusal is its error (NOT_FOUND,
   * OUT_OF_RANGE, DATA_LOSS, ...); {@link NotReached} when no connection took the request.
   */
  public Read read(WorkerAddress worker, ReadBlockRequest req) throws IOException {
    if (closed) {
      throw new IllegalStateException("TransferClient is closed");
    }
    if (worker.transferPort() <= 0) {
      throw new NotReached("Worker " + worker + " serves no block transfers", null);
    }
    Connection kept = takeIdle(worker);
    if (kept != null) {
      try {
        return kept.send(req);
      } catch (EOFException | NotReached e) {
        // The worker closed it while it sat idle (its idle timeout, a restart): once more on a new one.
        kept.close();
        LOG.debug("A kept block transfer connection to {} was closed by the worker; reconnecting", worker, e);
      } catch (IOException | RuntimeException e) {
        kept.close();
        throw e;
      }
    }
    Connection fresh = connect(worker);
    try {
      return fresh.send(req);
    } catch (EOFException e) {
      fresh.close();
      throw new NotReached("Worker " + worker + " closed the block transfer connection " + fresh.where
          + " before answering (at its connection limit, strata.worker.transfer.connections.max?)", e);
    } catch (IOException | RuntimeException e) {
      fresh.close();
      throw e;
    }
  }

  /** Closes kept connections idle longer than the idle time (the owner's maintenance thread calls this). */
  public void closeIdle() {
    long now = nanoClock.getAsLong();
    List<Connection> stale = new java.util.ArrayList<>();
    synchronized (idle) {
      for (Deque<Connection> q : idle.values()) {
        q.removeIf(c -> {
          boolean old = now - c.idleSince > idleNanos;
          if (old) {
            stale.add(c);
          }
          return old;
        });
      }
      idle.values().removeIf(Deque::isEmpty);
    }
    stale.forEach(Connection::close);
  }

  /** Connections opened so far (for tests: reads one after another share one). */
  public long connectionsOpened() {
    return opened.get();
  }

  /** Connections kept idle now (for tests). */
  public int idleConnections() {
    synchronized (idle) {
      return idle.values().stream().mapToInt(Deque::size).sum();
    }
  }

  /** Why workers on this host are reached over TCP rather than their transfer domain sockets. */
  public java.util.Collection<String> domainSocketFallbackReasons() {
    return List.copyOf(tcpOnly.values());
  }

  private Connection takeIdle(WorkerAddress worker) {
    long now = nanoClock.getAsLong();
    Connection stale = null;
    Connection found = null;
    synchronized (idle) {
      Deque<Connection> q = idle.get(worker);
      while (q != null && !q.isEmpty()) {
        Connection c = q.pollLast();
        if (now - c.idleSince <= idleNanos) {
          found = c;
          break;
        }
        stale = c; // older ones are older still: the rest are closed by closeIdle
      }
    }
    if (stale != null) {
      stale.close();
    }
    return found;
  }

  private void giveBack(Connection c) {
    boolean keep;
    synchronized (idle) {
      Deque<Connection> q = idle.computeIfAbsent(c.worker, w -> new ArrayDeque<>());
      keep = !closed && q.size() < idlePerWorker;
      if (keep) {
        c.idleSince = nanoClock.getAsLong();
        q.addLast(c);
      }
    }
    if (!keep) {
      c.close();
    }
  }

  private Connection connect(WorkerAddress worker) throws IOException {
    if (domainSocket && onThisHost.test(worker) && !tcpOnly.containsKey(worker)) {
      Path socket = Path.of(socketTemplate.replace("${strata.worker.rpc.port}", Integer.toString(worker.rpcPort())));
      if (!Files.exists(socket)) {
        fallback(worker, "its transfer domain socket " + socket + " does not exist (the worker serves none, or "
            + "strata.user.transfer.domain.socket.path names another file than its "
            + "strata.worker.transfer.domain.socket.path)");
      } else {
        try {
          return open(worker, UnixDomainSocketAddress.of(socket), "over " + socket);
        } catch (NotReached e) {
          fallback(worker, e.getMessage());
        }
      }
    }
    return open(worker, new InetSocketAddress(worker.host(), worker.transferPort()),
        "to " + worker.host() + ":" + worker.transferPort());
  }

  private void fallback(WorkerAddress worker, String why) {
    if (tcpOnly.putIfAbsent(worker, why) == null) {
      LOG.info("Block transfers with worker {} go over TCP, not its domain socket: {}", worker, why);
    }
  }

  private Connection open(WorkerAddress worker, SocketAddress address, String where) throws IOException {
    SocketChannel ch = null;
    Selector selector = null;
    try {
      ch = SocketChannel.open(address instanceof UnixDomainSocketAddress
          ? java.net.StandardProtocolFamily.UNIX : java.net.StandardProtocolFamily.INET);
      ch.configureBlocking(false);
      if (!(address instanceof UnixDomainSocketAddress)) {
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
      }
      selector = Selector.open();
      SelectionKey key = ch.register(selector, SelectionKey.OP_CONNECT);
      if (!ch.connect(address)) {
        if (selector.select(timeoutMs) == 0) {
          throw new DeadlineExceededException("Connecting " + where + " (worker " + worker + "'s block transfers) "
              + "took more than " + timeoutMs + " ms");
        }
        selector.selectedKeys().clear();
        ch.finishConnect();
      }
      key.interestOps(0);
      opened.incrementAndGet();
      return new Connection(worker, ch, selector, where);
    } catch (StrataException e) {
      closeQuietly(ch, selector);
      throw e;
    } catch (IOException e) {
      closeQuietly(ch, selector);
      throw new NotReached("Cannot connect " + where + " for worker " + worker + "'s block transfers: " + e, e);
    }
  }

  private static void closeQuietly(SocketChannel ch, Selector selector) {
    try {
      if (selector != null) {
        selector.close();
      }
      if (ch != null) {
        ch.close();
      }
    } catch (IOException ignored) {
      // closing
    }
  }

  @Override
  public void close() {
    closed = true;
    List<Connection> all = new java.util.ArrayList<>();
    synchronized (idle) {
      idle.values().forEach(all::addAll);
      idle.clear();
    }
    all.forEach(Connection::close);
  }

  /** One socket to one worker; used by one read at a time. */
  private final class Connection {
    final WorkerAddress worker;
    final SocketChannel ch;
    final Selector selector;
    final String where;
    final SelectionKey key;
    /** Allocated on the first read, then kept with the connection (a direct buffer costs to make). */
    private ByteBuffer buffer;
    long idleSince;

    Connection(WorkerAddress worker, SocketChannel ch, Selector selector, String where) {
      this.worker = worker;
      this.ch = ch;
      this.selector = selector;
      this.where = where;
      this.key = ch.keyFor(selector);
    }

    Read send(ReadBlockRequest req) throws IOException {
      byte[] body = req.toByteArray();
      ByteBuffer out = ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).flip();
      try {
        while (out.hasRemaining()) {
          if (ch.write(out) == 0) {
            await(SelectionKey.OP_WRITE, "sending a read request for block " + req.getBlockId());
          }
        }
      } catch (IOException e) {
        if (e instanceof StrataException) {
          throw e;
        }
        throw new NotReached("Sending a read request for block " + req.getBlockId() + " " + where + " failed: " + e,
            e);
      }
      ByteBuffer len = ByteBuffer.allocate(4);
      fill(len, req.getBlockId());
      int size = len.flip().getInt();
      if (size < 0 || size > MAX_HEADER_BYTES) {
        close();
        throw new io.strata.common.exception.InternalException("Worker " + worker + " answered a read of block "
            + req.getBlockId() + " with a " + size + "-byte header (at most " + MAX_HEADER_BYTES + ")");
      }
      ByteBuffer head = ByteBuffer.allocate(size);
      fill(head, req.getBlockId());
      TransferReadResponse header = TransferReadResponse.parseFrom(head.flip());
      if (!header.getErrorCode().isEmpty()) {
        ErrorCode code;
        try {
          code = ErrorCode.valueOf(header.getErrorCode());
        } catch (IllegalArgumentException e) {
          code = ErrorCode.INTERNAL;
        }
        giveBackOrClose(code);
        throw code.toException(header.getErrorMessage(), null);
      }
      return new Read(this, header, req.getBlockId());
    }

    /** After an error answer the stream is in step unless the worker closes it (it does for bad requests). */
    private void giveBackOrClose(ErrorCode code) {
      if (code == ErrorCode.INVALID_ARGUMENT || code == ErrorCode.RESOURCE_EXHAUSTED) {
        close();
      } else {
        giveBack(this);
      }
    }

    /** Reads until {@code buf} is full; EOF before that is an {@link EOFException}. */
    void fill(ByteBuffer buf, long blockId) throws IOException {
      while (buf.hasRemaining()) {
        int n = ch.read(buf);
        if (n < 0) {
          throw new EOFException("Worker " + worker + " closed the block transfer connection " + where
              + " while sending block " + blockId);
        }
        if (n == 0) {
          await(SelectionKey.OP_READ, "reading block " + blockId);
        }
      }
    }

    /** Reads what is there into {@code buf} (waiting for at least one byte); -1 at EOF. */
    int readSome(ByteBuffer buf, long blockId) throws IOException {
      while (true) {
        int n = ch.read(buf);
        if (n != 0) {
          return n;
        }
        await(SelectionKey.OP_READ, "reading block " + blockId);
      }
    }

    private void await(int op, String what) throws IOException {
      key.interestOps(op);
      try {
        int ready = selector.select(timeoutMs);
        if (Thread.interrupted()) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("Interrupted while " + what + " from worker " + worker);
        }
        if (ready == 0) {
          throw new DeadlineExceededException("Worker " + worker + " sent nothing for " + timeoutMs + " ms while "
              + what + " (block transfer " + where + ")");
        }
        selector.selectedKeys().clear();
      } finally {
        key.interestOps(0);
      }
    }

    ByteBuffer buffer() {
      if (buffer == null) {
        buffer = ByteBuffer.allocateDirect(BUFFER_BYTES);
      }
      return buffer;
    }

    void close() {
      closeQuietly(ch, selector);
    }
  }

  /**
   * One answered read: {@link #length} raw bytes of the block from {@link #offset} follow on the socket.
   * Closing it after the last byte keeps the connection for the next read; before, closes the connection.
   */
  public final class Read implements AutoCloseable {
    private final Connection conn;
    private final TransferReadResponse header;
    private final long blockId;
    private long remaining;
    private boolean done;

    Read(Connection conn, TransferReadResponse header, long blockId) {
      this.conn = conn;
      this.header = header;
      this.blockId = blockId;
      this.remaining = header.getLength();
    }

    /** Block offset of the first byte sent. */
    public long offset() {
      return header.getOffset();
    }

    /** Bytes sent in all. */
    public long length() {
      return header.getLength();
    }

    /** The stored CRC32C of each checksum chunk sent (empty when not asked for). */
    public List<Integer> checksums() {
      return header.getChunkCrc32CList();
    }

    /** How the worker is reached ("to host:port", "over /path.sock"). */
    public String where() {
      return conn.where;
    }

    /**
     * Reads the next bytes into {@code buf}, filling it or reaching the end of what is sent; returns the count
     * (0 only when nothing is left). The worker closing early is UNAVAILABLE, naming how far it got.
     */
    public int readFully(ByteBuffer buf) throws IOException {
      int want = (int) Math.min(buf.remaining(), remaining);
      int limit = buf.limit();
      buf.limit(buf.position() + want);
      int got = 0;
      try {
        while (buf.hasRemaining()) {
          int n = conn.readSome(buf, blockId);
          if (n < 0) {
            long sent = header.getLength() - remaining + got;
            throw new UnavailableException("Worker " + conn.worker + " closed the block transfer connection "
                + conn.where + " after " + sent + " of " + header.getLength() + " bytes of block " + blockId);
          }
          got += n;
        }
      } finally {
        buf.limit(limit);
      }
      remaining -= got;
      return got;
    }

    /** Bytes not yet read. */
    public long remaining() {
      return remaining;
    }

    /**
     * The connection's read buffer, for this read's bytes: {@link #BUFFER_BYTES}, direct, contents undefined.
     * Only until {@link #close}.
     */
    public ByteBuffer buffer() {
      return conn.buffer();
    }

    /**
     * Ends the read. The connection is kept for the next read when every byte was read, or when few are left
     * (read and dropped here); otherwise it is closed, and the worker releases the block when it notices.
     */
    @Override
    public void close() {
      if (done) {
        return;
      }
      done = true;
      if (remaining > 0 && remaining <= DRAIN_MAX_BYTES) {
        try {
          ByteBuffer b = conn.buffer();
          while (remaining > 0) {
            b.clear();
            readFully(b);
          }
        } catch (IOException e) {
          conn.close();
          return;
        }
      }
      if (remaining == 0) {
        giveBack(conn);
      } else {
        conn.close();
      }
    }
  }
}
