package io.strata.client;

import io.strata.common.exception.StrataException;
import io.strata.proto.RenewLeaseRequest;
import io.strata.proto.RenewLeaseResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the write leases of one {@link FileSystemContext}: every {@code strata.user.lease.renew.interval}
 * while the context has files open for writing, one RenewLease call names them all (as HDFS's
 * LeaseRenewer: one call per client, not per file). The master recovers (deletes) an incomplete file
 * whose writer stopped renewing for {@code strata.master.lease.timeout}, so a writer killed mid-file
 * leaves nothing behind.
 *
 * <p>Thread-safe. The renewal thread (a daemon, started with the first open file) holds no lock across
 * the RPC; a failed renewal is logged and tried again at the next interval.
 */
final class LeaseRenewer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseRenewer.class);

  private final FileSystemContext context;
  private final String clientId = "client-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID();
  private final long intervalMs;
  private final Set<Long> files = ConcurrentHashMap.newKeySet();
  private ScheduledExecutorService timer;
  private boolean closed;

  LeaseRenewer(FileSystemContext context, long intervalMs) {
    this.context = context;
    this.intervalMs = intervalMs;
  }

  /** The name this client's files are leased under (sent with every create). */
  String clientId() {
    return clientId;
  }

  /** A file is being written: keep its lease. */
  void add(long fileId) {
    files.add(fileId);
    synchronized (this) {
      if (timer == null && !closed) {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "strata-lease-renewer");
          t.setDaemon(true);
          return t;
        });
        timer.scheduleWithFixedDelay(this::renewQuietly, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
      }
    }
  }

  /** Whether this client still holds {@code fileId}'s lease (added, not yet removed nor named lost by the master). */
  boolean holds(long fileId) {
    return files.contains(fileId);
  }

  /** The file was completed or abandoned. */
  void remove(long fileId) {
    files.remove(fileId);
  }

  private void renewQuietly() {
    try {
      renew();
    } catch (StrataException | RuntimeException e) {
      LOG.warn("Renewing the write leases of {} files failed (tried again in {} ms): {}", files.size(), intervalMs,
          e.getMessage());
    }
  }

  /** One renewal of every open file's lease; nothing when none is open. */
  void renew() throws StrataException {
    List<Long> open = new ArrayList<>(files);
    if (open.isEmpty()) {
      return;
    }
    RenewLeaseRequest req = RenewLeaseRequest.newBuilder().setClientId(clientId).addAllFileIds(open).build();
    RenewLeaseResponse res = context.callMaster(m -> m.renewLease(req));
    if (res.getLostFileIdsCount() > 0) {
      LOG.warn("The master no longer holds files {} as being written (recovered after a lapsed lease, deleted, "
          + "or completed); their writes will fail", res.getLostFileIdsList());
      files.removeAll(res.getLostFileIdsList());
    }
  }

  @Override
  public void close() {
    ScheduledExecutorService t;
    synchronized (this) {
      closed = true;
      t = timer;
      timer = null;
    }
    if (t != null) {
      t.shutdownNow();
    }
  }
}
