package io.strata.worker;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.grpc.GrpcErrors;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.BlockMasterWorkerServiceGrpc;
import io.strata.proto.BlockReportProto;
import io.strata.proto.CommitBlockRequest;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.WorkerAddressProto;
import io.strata.proto.WorkerHeartbeatRequest;
import io.strata.proto.WorkerHeartbeatResponse;
import io.strata.worker.store.BlockStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's side of the master protocol: registers with a full block report, heartbeats capacity and
 * usage with the blocks removed since the last beat, removes the blocks the master tells it to, commits
 * new blocks, and registers again when the master says it does not know this worker (a master restart, or
 * this worker was marked lost).
 *
 * <p>Thread-safe: {@link #tick()} runs on the worker's one heartbeat thread; {@link #commitBlock} on RPC
 * threads. The pending-removal list is guarded by this object's monitor.
 */
final class MasterSync {
  private static final Logger LOG = LoggerFactory.getLogger(MasterSync.class);

  private final ManagedChannel channel;
  private final BlockStore store;
  private final WorkerAddress address;
  private final long rpcTimeoutMs;
  private final long startTimeMs;
  private volatile long workerId = -1;
  private final List<Long> removedSinceBeat = new ArrayList<>();
  private boolean loggedUnreachable;

  MasterSync(ManagedChannel channel, BlockStore store, WorkerAddress address, long rpcTimeoutMs, Clock clock) {
    this.channel = channel;
    this.store = store;
    this.address = address;
    this.rpcTimeoutMs = rpcTimeoutMs;
    this.startTimeMs = clock.millis();
  }

  private BlockMasterWorkerServiceGrpc.BlockMasterWorkerServiceBlockingStub stub() {
    return BlockMasterWorkerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(rpcTimeoutMs, TimeUnit.MILLISECONDS);
  }

  long workerId() {
    return workerId;
  }

  boolean isRegistered() {
    return workerId >= 0;
  }

  /** One heartbeat (or registration) round; never throws. */
  void tick() {
    try {
      if (workerId < 0) {
        register();
      } else {
        heartbeat();
      }
      if (loggedUnreachable) {
        LOG.info("Master reachable again");
        loggedUnreachable = false;
      }
    } catch (StatusRuntimeException e) {
      if (!loggedUnreachable) {
        LOG.warn("Cannot reach the master: {}; retrying every heartbeat", GrpcErrors.fromThrowable(e).getMessage());
        loggedUnreachable = true;
      }
    } catch (RuntimeException e) {
      LOG.error("Heartbeat round failed", e);
    }
  }

  private void register() {
    RegisterWorkerRequest.Builder req = RegisterWorkerRequest.newBuilder()
        .setAddress(WorkerAddressProto.newBuilder().setHost(address.host()).setRpcPort(address.rpcPort()))
        .setCapacityBytes(store.capacityBytes()).setUsedBytes(store.usedBytes()).setStartTimeMs(startTimeMs);
    for (BlockStore.BlockMeta b : store.committedBlocks()) {
      req.addBlocks(BlockReportProto.newBuilder().setBlockId(b.blockId()).setLength(b.length()).setTier(b.tier()));
    }
    synchronized (this) {
      removedSinceBeat.clear();
    }
    workerId = stub().registerWorker(req.build()).getWorkerId();
    LOG.info("Registered with the master as worker {} ({} blocks reported)", workerId, req.getBlocksCount());
  }

  private void heartbeat() {
    List<Long> removed;
    synchronized (this) {
      removed = new ArrayList<>(removedSinceBeat);
    }
    WorkerHeartbeatResponse res = stub().heartbeat(WorkerHeartbeatRequest.newBuilder().setWorkerId(workerId)
        .setCapacityBytes(store.capacityBytes()).setUsedBytes(store.usedBytes())
        .addAllRemovedBlockIds(removed).build());
    synchronized (this) {
      removedSinceBeat.removeAll(removed);
    }
    if (res.getCommand() == WorkerHeartbeatResponse.Command.REGISTER) {
      LOG.info("The master does not know worker {}: registering again", workerId);
      workerId = -1;
      register();
      return;
    }
    for (long id : res.getRemoveBlockIdsList()) {
      try {
        store.remove(id);
      } catch (java.io.IOException e) {
        LOG.warn("Cannot remove block {}: {}", id, e.toString());
        continue;
      }
      blockRemoved(id);
    }
  }

  /** Records a removal to report in the next heartbeat. */
  synchronized void blockRemoved(long blockId) {
    removedSinceBeat.add(blockId);
  }

  /** Tells the master this worker holds a new block; throws the master's error. */
  void commitBlock(long blockId, long length, String tier) throws StrataException {
    long id = workerId;
    if (id < 0) {
      throw new UnavailableException("This worker is not registered with the master yet; retry shortly");
    }
    try {
      stub().commitBlock(CommitBlockRequest.newBuilder().setWorkerId(id).setBlockId(blockId).setLength(length)
          .setTier(tier).build());
    } catch (StatusRuntimeException e) {
      throw GrpcErrors.fromThrowable(e);
    }
  }
}
