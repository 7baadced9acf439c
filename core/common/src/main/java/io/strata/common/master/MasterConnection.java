package io.strata.common.master;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.grpc.ClientEventLoops;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.grpc.GrpcErrors;
import io.strata.common.time.Deadlines;
import java.io.Closeable;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A channel to the leading master that follows failovers: calls that fail with UNAVAILABLE drop the
 * channel, ask the {@link MasterInquireClient} for the leader again, and retry with backoff within the
 * retry window. With a single configured master there is nothing to fail over to, so the window is 0
 * (the first UNAVAILABLE is final); with a master list or ZooKeeper it is
 * {@link CommonKeys#MASTER_RETRY_WINDOW}. Thread-safe; the monitor guards the channel only and is never held
 * across the leader lookup or a call.
 */
public final class MasterConnection implements Closeable {
  private final MasterInquireClient inquire;
  private final long maxMessage;
  private final long windowMs;
  /** The event loops of the channels made here, or null for gRPC's shared ones. */
  private final ClientEventLoops loops;
  private ManagedChannel channel;
  private InetSocketAddress address;
  /** The leader lookup in progress, if any (guarded by this). */
  private CompletableFuture<ManagedChannel> finding;
  private boolean closed;

  public MasterConnection(StrataConf conf) {
    this(conf, null);
  }

  /**
   * As {@link #MasterConnection(StrataConf)}, with the channels (to the leader, and the polls that find it) on
   * {@code loops}, which the caller closes after this connection; null: gRPC's shared event loops.
   */
  public MasterConnection(StrataConf conf, ClientEventLoops loops) {
    this.loops = loops;
    this.inquire = MasterInquireClient.create(conf, loops);
    this.maxMessage = conf.get(CommonKeys.NETWORK_MAX_MESSAGE_SIZE);
    boolean ha = conf.isSet(CommonKeys.ZOOKEEPER_ADDRESS) || conf.isSet(CommonKeys.MASTER_RPC_ADDRESSES);
    this.windowMs = ha ? conf.get(CommonKeys.MASTER_RETRY_WINDOW).toMillis() : 0;
  }

  /**
   * The channel to the current leader, found first if needed. The lookup (a ZooKeeper read, or a Ping to each
   * configured master) runs with no lock held; callers that need a channel meanwhile wait for that one
   * lookup instead of starting their own.
   */
  public ManagedChannel channel() throws StrataException {
    CompletableFuture<ManagedChannel> pending;
    boolean finder = false;
    synchronized (this) {
      if (closed) {
        throw new io.strata.common.exception.FailedPreconditionException("This client is closed");
      }
      if (channel != null) {
        return channel;
      }
      if (finding == null) {
        finding = new CompletableFuture<>();
        finder = true;
      }
      pending = finding;
    }
    if (finder) {
      find(pending);
    }
    try {
      return pending.join();
    } catch (java.util.concurrent.CompletionException e) {
      if (e.getCause() instanceof StrataException se) {
        throw se;
      }
      throw e;
    }
  }

  /** Looks the leader up (no lock held), installs its channel and completes {@code pending} with it. */
  private void find(CompletableFuture<ManagedChannel> pending) {
    ManagedChannel fresh = null;
    ManagedChannel installed = null;
    StrataException failure = null;
    try {
      InetSocketAddress found = inquire.leader();
      fresh = GrpcChannels.forAddress(found.getHostString(), found.getPort(), maxMessage, loops);
      synchronized (this) {
        finding = null;
        if (!closed) {
          channel = fresh;
          address = found;
          installed = fresh;
          fresh = null;
        } else {
          failure = new io.strata.common.exception.FailedPreconditionException("This client is closed");
        }
      }
    } catch (StrataException | RuntimeException e) {
      synchronized (this) {
        finding = null;
      }
      failure = e instanceof StrataException se ? se
          : new UnavailableException("Cannot find the leading master: " + e, e);
    }
    if (fresh != null) {
      fresh.shutdownNow(); // closed while looking
    }
    if (failure != null) {
      pending.completeExceptionally(failure);
    } else {
      pending.complete(installed);
    }
  }

  /** Drops the current channel (its master failed or stepped down); the next call finds the leader. */
  private void invalidate(ManagedChannel failed) {
    synchronized (this) {
      if (channel != failed) {
        return; // another caller already replaced it
      }
      channel = null;
    }
    failed.shutdownNow();
  }

  /** {@code host:port} of the master last used, or of the candidates. */
  public synchronized String describe() {
    if (address != null) {
      return MasterInquireClient.format(address);
    }
    StringBuilder sb = new StringBuilder();
    for (InetSocketAddress a : inquire.candidates()) {
      sb.append(sb.length() == 0 ? "" : ",").append(MasterInquireClient.format(a));
    }
    return sb.length() == 0 ? "the leader in ZooKeeper" : sb.toString();
  }

  /** Runs {@code call} on the leader's channel, following failovers within the retry window. */
  public <T> T call(Function<ManagedChannel, T> call) throws StrataException {
    long deadline = Deadlines.nanoDeadline(System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(windowMs));
    long backoff = 50;
    while (true) {
      ManagedChannel ch = null;
      StrataException failure;
      try {
        ch = channel();
        return call.apply(ch);
      } catch (StatusRuntimeException e) {
        failure = GrpcErrors.fromThrowable(e);
      } catch (StrataException e) {
        failure = e;
      }
      if (!(failure instanceof UnavailableException) || windowMs == 0
          || Deadlines.nanoReached(System.nanoTime(), deadline)) {
        throw failure;
      }
      if (ch != null) {
        invalidate(ch);
      }
      try {
        Thread.sleep(backoff);
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        throw failure;
      }
      backoff = Deadlines.nextBackoffMillis(backoff, 1000);
    }
  }

  @Override
  public void close() {
    ManagedChannel ch;
    synchronized (this) {
      closed = true;
      ch = channel;
      channel = null;
    }
    if (ch != null) {
      GrpcChannels.close(ch);
    }
    inquire.close();
  }
}
