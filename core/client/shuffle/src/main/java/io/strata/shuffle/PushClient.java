package io.strata.shuffle;

import com.google.protobuf.ByteString;
import io.grpc.stub.StreamObserver;
import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.StrataException;
import io.strata.common.grpc.GrpcErrors;
import io.strata.common.shuffle.BatchHeader;
import io.strata.proto.PushBatchProto;
import io.strata.proto.PushRequest;
import io.strata.proto.PushResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Pushes one map attempt's batches to the partitions' primary workers: batches for one worker are
 * gathered into one request up to {@code requestBytes}, requests go asynchronously with at most
 * {@code maxInFlight} outstanding (the caller blocks for a permit), and {@link #finish} waits until every
 * batch is acknowledged by its primary and replica. A BACK_OFF answer is retried after the delay it names
 * (not counted as a failure); a failed request is retried on the same location up to {@code retries}
 * times, then each of its partitions is revived (a new epoch on other workers) and its batches pushed
 * there, avoiding the worker whose hop failed (the primary's replica when the primary's answer names it,
 * else the primary); a sealed or unknown partition, or one whose replica's hop failed (the pair takes no more
 * batches then), is revived at once. Retried batches keep their batch ids, so a
 * batch applied twice is dropped by readers. Batch ids count per partition and mark the attempt's last
 * batch there ({@link BatchHeader#batchId}), so a reader can tell it has all of them. Bad input answers (INVALID_ARGUMENT, DATA_LOSS) fail the
 * attempt.
 *
 * <p>Thread-safety: {@link #push} and {@link #finish} from one task thread; answers arrive on gRPC threads
 * and retries and revives run on the shared {@code retryPool}.
 */
public final class PushClient {
  /** Gets a new location for a partition whose location failed. */
  @FunctionalInterface
  public interface Reviver {
    PartitionLocation revive(PartitionLocation failed, Set<String> badWorkers) throws IOException;
  }

  public record Settings(int maxInFlight, long requestBytes, int retries, long rpcTimeoutMs) {}

  private record Item(PartitionLocation loc, PushBatchProto batch) {}

  private final ShuffleChannels channels;
  private final String appId;
  private final int shuffleId;
  private final PartitionLocation[] locations;
  private final Reviver reviver;
  private final Settings settings;
  private final ScheduledExecutorService retryPool;
  private final Semaphore permits;
  private final Map<String, List<Item>> pending = new LinkedHashMap<>();
  private final Map<String, Long> pendingBytes = new HashMap<>();
  private final long[] pushedBytes;
  /** Per partition: batches pushed so far (the next one's number). */
  private final int[] batches;
  /** Per partition: whether its last batch was pushed (no more may follow). */
  private final boolean[] ended;
  private int outstanding;
  private IOException failure;
  private long revives;
  /** Push calls sent and not answered yet, and the most there were at once ({@link #mostPushesInFlight}). */
  private final AtomicInteger callsOpen = new AtomicInteger();
  private final AtomicInteger callsOpenMost = new AtomicInteger();

  public PushClient(ShuffleChannels channels, String appId, int shuffleId, PartitionLocation[] locations,
      Reviver reviver, Settings settings, ScheduledExecutorService retryPool) {
    this.channels = channels;
    this.appId = appId;
    this.shuffleId = shuffleId;
    this.locations = locations.clone();
    this.reviver = reviver;
    this.settings = settings;
    this.retryPool = retryPool;
    this.permits = new Semaphore(settings.maxInFlight());
    this.pushedBytes = new long[locations.length];
    this.batches = new int[locations.length];
    this.ended = new boolean[locations.length];
  }

  /** Queues one batch of {@code partitionId}, not its last (see {@link #push(int, int, long, byte[], int, int, boolean)}). */
  public void push(int partitionId, int mapIndex, long attemptId, byte[] data, int off, int len) throws IOException {
    push(partitionId, mapIndex, attemptId, data, off, len, false);
  }

  /**
   * Queues one batch of {@code partitionId} (the bytes are copied), marked as the attempt's last for the partition
   * when {@code last}; sends when its worker's request is full. IllegalStateException after the partition's last.
   */
  public void push(int partitionId, int mapIndex, long attemptId, byte[] data, int off, int len, boolean last)
      throws IOException {
    checkFailure();
    if (ended[partitionId]) {
      throw new IllegalStateException("Partition " + partitionId + " of shuffle " + shuffleId + " already had map "
          + mapIndex + "'s last batch");
    }
    int batchId = BatchHeader.batchId(batches[partitionId]++, last);
    ended[partitionId] = last;
    PartitionLocation loc;
    synchronized (this) {
      loc = locations[partitionId];
    }
    PushBatchProto b = PushBatchProto.newBuilder().setPartitionId(partitionId).setFileId(loc.fileId())
        .setMapIndex(mapIndex).setAttemptId(attemptId).setBatchId(batchId).setLength(len)
        .setCrc32C(BatchHeader.crc32c(data, off, len)).setData(ByteString.copyFrom(data, off, len)).build();
    pushedBytes[partitionId] += len;
    String worker = loc.primary();
    pending.computeIfAbsent(worker, k -> new ArrayList<>()).add(new Item(loc, b));
    long bytes = pendingBytes.merge(worker, (long) len, Long::sum);
    if (bytes >= settings.requestBytes()) {
      sendPending(worker);
    }
  }

  /**
   * Ends every partition this attempt pushed to without marking a batch last, with an empty batch marked last,
   * so readers can tell they have all its batches (call once the attempt has no more to push).
   */
  public void endPartitions(int mapIndex, long attemptId) throws IOException {
    for (int p = 0; p < batches.length; p++) {
      if (batches[p] > 0 && !ended[p]) {
        push(p, mapIndex, attemptId, new byte[0], 0, 0, true);
      }
    }
  }

  /** Batch data bytes pushed per partition so far (a map task's partition lengths). */
  public long[] pushedBytes() {
    return pushedBytes.clone();
  }

  /** Partitions revived by this client so far. */
  public synchronized long revives() {
    return revives;
  }

  /**
   * The most push calls this client had sent and not yet had answered at one time (a call counts from just before
   * it goes until its answer or failure arrives, whoever holds permits): at most {@code maxInFlight}.
   */
  int mostPushesInFlight() {
    return callsOpenMost.get();
  }

  private void sendPending(String worker) throws IOException {
    List<Item> items = pending.remove(worker);
    pendingBytes.remove(worker);
    if (items != null && !items.isEmpty()) {
      acquire();
      synchronized (this) {
        outstanding++;
      }
      send(worker, items, 0);
    }
  }

  private void acquire() throws IOException {
    try {
      permits.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("Interrupted waiting to push shuffle batches");
    }
  }

  /** Sends a request holding a permit and counted in {@code outstanding}; the answer settles both. */
  private void send(String worker, List<Item> items, int attempt) {
    PushRequest.Builder req = PushRequest.newBuilder().setAppId(appId).setShuffleId(shuffleId);
    for (Item i : items) {
      req.addBatches(i.batch());
    }
    String[] hp = split(worker);
    // Counted open before it goes and closed before its permit is let go: never more open than permits taken.
    callsOpenMost.accumulateAndGet(callsOpen.incrementAndGet(), Math::max);
    AtomicBoolean open = new AtomicBoolean(true);
    Runnable closeCall = () -> {
      if (open.getAndSet(false)) {
        callsOpen.decrementAndGet();
      }
    };
    try {
      channels.async(hp[0], Integer.parseInt(hp[1])).withDeadlineAfter(settings.rpcTimeoutMs(), TimeUnit.MILLISECONDS)
          .push(req.build(), new StreamObserver<>() {
            private boolean answered;

            @Override
            public void onNext(PushResponse r) {
              answered = true;
              closeCall.run();
              permits.release();
              if (r.getStatus() == PushResponse.Status.OK) {
                settled(null);
              } else {
                long delay = Math.max(1, r.getRetryAfterMs());
                retryPool.schedule(() -> resend(worker, items, attempt), delay, TimeUnit.MILLISECONDS);
              }
            }

            @Override
            public void onError(Throwable t) {
              closeCall.run();
              permits.release();
              StrataException e = GrpcErrors.fromThrowable(t);
              retryPool.execute(() -> failed(worker, items, attempt, e));
            }

            @Override
            public void onCompleted() {
              if (!answered) {
                closeCall.run();
                permits.release();
                settled(new IOException("Worker " + worker + " ended a push without an answer"));
              }
            }
          });
    } catch (RuntimeException e) {
      closeCall.run();
      permits.release();
      retryPool.execute(() -> failed(worker, items, attempt, GrpcErrors.fromThrowable(e)));
    }
  }

  /** On the retry pool: the same request again (after BACK_OFF or a retryable failure). */
  private void resend(String worker, List<Item> items, int attempt) {
    try {
      acquire();
    } catch (IOException e) {
      settled(e);
      return;
    }
    send(worker, items, attempt);
  }

  private void failed(String worker, List<Item> items, int attempt, StrataException e) {
    ErrorCode code = e.code();
    if (code == ErrorCode.INVALID_ARGUMENT || code == ErrorCode.DATA_LOSS || code == ErrorCode.PERMISSION_DENIED) {
      settled(new IOException("Pushing shuffle batches to worker " + worker + " failed: " + e.getMessage(), e));
      return;
    }
    boolean reviveNow = code == ErrorCode.FAILED_PRECONDITION || code == ErrorCode.NOT_FOUND;
    // A replica's hop failed: its copy may have a gap now, so its primary takes no more batches for the pair.
    boolean replicaGap = e instanceof io.strata.common.exception.ReplicaUnavailableException;
    if (!reviveNow && !replicaGap && attempt < settings.retries()) {
      retryPool.schedule(() -> resend(worker, items, attempt + 1), Math.min(1000, 50L << attempt),
          TimeUnit.MILLISECONDS);
      return;
    }
    // Revive each partition of the request and push its batches to the new location. The worker to avoid
    // is the one whose hop failed: the replica when the primary says so, else the primary pushed to.
    Set<String> blamed = reviveNow ? Set.of()
        : Set.of(e instanceof io.strata.common.exception.ReplicaUnavailableException r ? r.replica() : worker);
    Map<String, List<Item>> moved = new LinkedHashMap<>();
    try {
      Map<Integer, PartitionLocation> fresh = new HashMap<>();
      for (Item i : items) {
        PartitionLocation loc = fresh.get(i.loc().partitionId());
        if (loc == null) {
          loc = reviver.revive(i.loc(), blamed);
          fresh.put(i.loc().partitionId(), loc);
          synchronized (this) {
            revives++;
            if (locations[loc.partitionId()].epoch() < loc.epoch()) {
              locations[loc.partitionId()] = loc;
            }
          }
        }
        moved.computeIfAbsent(loc.primary(), k -> new ArrayList<>())
            .add(new Item(loc, i.batch().toBuilder().setFileId(loc.fileId()).build()));
      }
    } catch (Exception ex) { // also the driver's checked SparkException, which Scala's askSync throws undeclared
      Throwable why = ex instanceof IOException || ex instanceof RuntimeException || ex.getCause() == null ? ex
          : ex.getCause(); // a wrapper's cause says why (the driver's answer)
      settled(new IOException("Pushing shuffle batches to worker " + worker + " failed (" + e.getMessage()
          + ") and reviving their partitions failed: " + why.getMessage(), ex));
      return;
    }
    synchronized (this) {
      outstanding += moved.size() - 1; // this request becomes one per new worker
    }
    for (Map.Entry<String, List<Item>> m : moved.entrySet()) {
      resend(m.getKey(), m.getValue(), 0);
    }
  }

  private synchronized void settled(IOException error) {
    outstanding--;
    if (error != null && failure == null) {
      failure = error;
    }
    notifyAll();
  }

  private synchronized void checkFailure() throws IOException {
    if (failure != null) {
      throw failure;
    }
  }

  /** Sends what is gathered and waits until every batch is acknowledged; throws the first failure. */
  public void finish() throws IOException {
    for (String w : new ArrayList<>(pending.keySet())) {
      sendPending(w);
    }
    synchronized (this) {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.rpcTimeoutMs()
          * (settings.retries() + 2) * 4);
      while (outstanding > 0 && failure == null) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new IOException("Shuffle pushes still unacknowledged after " + settings.rpcTimeoutMs()
              * (settings.retries() + 2) * 4 + " ms: " + outstanding + " requests");
        }
        try {
          wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new java.io.InterruptedIOException("Interrupted waiting for shuffle pushes");
        }
      }
      if (failure != null) {
        throw failure;
      }
    }
  }

  private static String[] split(String hostPort) {
    int i = hostPort.lastIndexOf(':');
    return new String[] {hostPort.substring(0, i), hostPort.substring(i + 1)};
  }
}
