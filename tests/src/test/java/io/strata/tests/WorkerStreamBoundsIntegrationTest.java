package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.WriteType;
import io.strata.common.exception.NotFoundException;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.id.BlockId;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.CacheBlockRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.FileSystemMasterServiceGrpc;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.WriteBlockHeader;
import io.strata.proto.WriteBlockRequest;
import io.strata.proto.WriteBlockResponse;
import io.strata.proto.WriteUfsFileHeader;
import io.strata.proto.WriteUfsFileRequest;
import io.strata.proto.WriteUfsFileResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A worker's data streams are bounded (issue 9, points 5 and 6), over a real cluster and raw gRPC
 * clients that behave as no Strata client would: streams per client connection and in total are capped
 * with RESOURCE_EXHAUSTED naming the key (UFS reads past the UFS pool's threads and queue with UNAVAILABLE, so clients
 * try another worker); a reader that requests one chunk and never more is cancelled
 * after the stall timeout, releasing its block so it can be removed; a UFS write stream that goes silent
 * is reaped with its partial file.
 */
class WorkerStreamBoundsIntegrationTest {
  private static final int BLOCK = 4 << 20; // well past the transport's windows, so a stalled reader stalls
  private LocalStrataCluster cluster;
  private final List<ManagedChannel> channels = new ArrayList<>();

  @AfterEach
  void stop() {
    channels.forEach(GrpcChannels::close);
    if (cluster != null) {
      cluster.close();
    }
  }

  private FileSystem start(String stallTimeout) throws IOException {
    cluster = LocalStrataCluster.builder().workers(1)
        .set("strata.worker.streams.per.client.max", 2)
        .set("strata.worker.streams.max", 3)
        .set("strata.worker.read.stream.stall.timeout", stallTimeout)
        .set("strata.worker.ufs.write.idle.timeout", stallTimeout)
        .build().start();
    return cluster.client();
  }

  private long writeBlock(FileSystem fs, String path) throws IOException {
    byte[] data = new byte[BLOCK];
    new Random(7).nextBytes(data);
    try (FileOutStream out = fs.createFile(path, CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(WriteType.MUST_CACHE))) {
      out.write(data);
    }
    return BlockId.of(fs.getStatus(path).id(), 0);
  }

  /** A new connection to the worker (a client of its own). */
  private ManagedChannel connect() {
    ManagedChannel ch = GrpcChannels.forAddress("127.0.0.1", cluster.worker(0).rpcPort(), 64 << 20);
    channels.add(ch);
    return ch;
  }

  /** A raw block read that asks for one 64 KiB chunk and no more until told. */
  private static final class Reader extends ClientCall.Listener<ReadBlockResponse> {
    final CountDownLatch firstChunk = new CountDownLatch(1);
    final CompletableFuture<Status> closed = new CompletableFuture<>();
    final AtomicLong bytes = new AtomicLong();
    final ClientCall<ReadBlockRequest, ReadBlockResponse> call;

    Reader(ManagedChannel ch, long blockId) {
      this(ch, ReadBlockRequest.newBuilder().setBlockId(blockId).setOffset(0).setLength(BLOCK)
          .setChunkSize(64 << 10).build());
    }

    Reader(ManagedChannel ch, ReadBlockRequest req) {
      call = ch.newCall(BlockWorkerServiceGrpc.getReadBlockMethod(), CallOptions.DEFAULT.withDeadlineAfter(2,
          TimeUnit.MINUTES));
      call.start(this, new Metadata());
      call.request(1);
      call.sendMessage(req);
      call.halfClose();
    }

    @Override
    public void onMessage(ReadBlockResponse m) {
      bytes.addAndGet(m.getChunk().size());
      firstChunk.countDown();
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
      closed.complete(status);
      firstChunk.countDown();
    }

    /** Waits for the first chunk or the close: true when the read was admitted. */
    boolean admitted() throws InterruptedException {
      assertThat(firstChunk.await(30, TimeUnit.SECONDS)).isTrue();
      return !closed.isDone();
    }

    Status refusal() throws Exception {
      return closed.get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void streamsPerClientAndInTotal_areCapped_withResourceExhaustedNamingTheKey() throws Exception {
    FileSystem fs = start("2min");
    long block = writeBlock(fs, "/capped");
    ManagedChannel a = connect();
    ManagedChannel b = connect();

    Reader a1 = new Reader(a, block);
    assertThat(a1.admitted()).isTrue();
    Reader a2 = new Reader(a, block);
    assertThat(a2.admitted()).isTrue();
    Reader a3 = new Reader(a, block);
    assertThat(a3.admitted()).as("third stream of one client").isFalse();
    assertThat(a3.refusal().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(a3.refusal().getDescription()).contains("strata.worker.streams.per.client.max");
    // a write stream counts as well
    CompletableFuture<Throwable> write = new CompletableFuture<>();
    StreamObserver<WriteBlockRequest> w = BlockWorkerServiceGrpc.newStub(a).writeBlock(new StreamObserver<>() {
      @Override
      public void onNext(WriteBlockResponse value) {
        write.complete(null);
      }

      @Override
      public void onError(Throwable t) {
        write.complete(t);
      }

      @Override
      public void onCompleted() {
        write.complete(null);
      }
    });
    w.onNext(WriteBlockRequest.newBuilder().setHeader(WriteBlockHeader.newBuilder().setBlockId(block + 1)
        .setMaxLength(10)).build());
    assertThat(Status.fromThrowable(write.get(30, TimeUnit.SECONDS)).getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);

    Reader b1 = new Reader(b, block);
    assertThat(b1.admitted()).isTrue();
    assertThat(cluster.worker(0).openStreams()).isEqualTo(3);
    Reader b2 = new Reader(b, block);
    assertThat(b2.admitted()).as("fourth stream of the worker").isFalse();
    assertThat(b2.refusal().getDescription()).contains("strata.worker.streams.max");

    // a stream that ends gives its place back
    a1.call.cancel("done", null);
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.worker(0).openStreams() == 2);
    Reader b3 = new Reader(b, block);
    assertThat(b3.admitted()).isTrue();
    for (Reader r : List.of(a2, b1, b3)) {
      r.call.cancel("done", null);
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.worker(0).openStreams() == 0);
  }

  @Test
  void readerThatStopsConsuming_isCancelledAfterTheStallTimeout_andReleasesTheBlock() throws Exception {
    FileSystem fs = start("1s");
    long block = writeBlock(fs, "/stalled");
    Reader r = new Reader(connect(), block);
    assertThat(r.admitted()).isTrue();
    assertThat(cluster.worker(0).openStreams()).isEqualTo(1);
    // the worker gives up on the reader and lets go of the block
    await().atMost(Duration.ofSeconds(30)).until(() -> cluster.worker(0).openStreams() == 0);
    assertThat(cluster.worker(0).store().remove(block)).isTrue();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> cluster.worker(0).store().get(block))
            .isInstanceOf(NotFoundException.class));
    // the reader, once it asks for the rest, gets what was sent before the cancel and then the reason
    r.call.request(Integer.MAX_VALUE);
    Status s = r.closed.get(30, TimeUnit.SECONDS);
    assertThat(s.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(s.getDescription()).contains("strata.worker.read.stream.stall.timeout");
    assertThat(r.bytes.get()).isLessThan(BLOCK);
  }

  @Test
  void ufsWriteStreamIdlePastTheTimeout_isReaped_withItsPartialFile() throws Exception {
    start("1s");
    ManagedChannel master = GrpcChannels.forAddress("127.0.0.1", cluster.masterPort(), 64 << 20);
    channels.add(master);
    long fileId = FileSystemMasterServiceGrpc.newBlockingStub(master).createFile(CreateFileRequest.newBuilder()
        .setPath("/through").setBlockSize(1 << 20).setWriteType("THROUGH").build()).getFile().getId();
    CompletableFuture<Throwable> ended = new CompletableFuture<>();
    StreamObserver<WriteUfsFileRequest> w = BlockWorkerServiceGrpc.newStub(connect()).writeUfsFile(
        new StreamObserver<>() {
          @Override
          public void onNext(WriteUfsFileResponse value) {
          }

          @Override
          public void onError(Throwable t) {
            ended.complete(t);
          }

          @Override
          public void onCompleted() {
            ended.complete(null);
          }
        });
    w.onNext(WriteUfsFileRequest.newBuilder().setHeader(WriteUfsFileHeader.newBuilder().setFileId(fileId))
        .setChunk(ByteString.copyFrom(new byte[1000])).build());
    // the partial file exists in the UFS while the client is silent ...
    await().atMost(Duration.ofSeconds(20)).until(() -> !ufsEntries().isEmpty());
    assertThat(cluster.worker(0).openStreams()).isEqualTo(1);
    // ... and is gone, with the stream, once it idled past the timeout
    Throwable t = ended.get(30, TimeUnit.SECONDS);
    Status s = Status.fromThrowable(t);
    assertThat(s.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(s.getDescription()).contains("strata.worker.ufs.write.idle.timeout");
    await().atMost(Duration.ofSeconds(20)).until(() -> ufsEntries().isEmpty() && cluster.worker(0).openStreams() == 0);
  }

  /** Everything in the root UFS dir (the file being written is there under its temporary name). */
  private List<String> ufsEntries() throws IOException {
    try (var s = java.nio.file.Files.list(cluster.rootUfsDir())) {
      return s.map(p -> p.getFileName().toString()).toList();
    }
  }

  @Test
  void readsFromTheUfs_pastItsThreadsAndQueue_areRefusedUnavailable_soClientsTryAnotherWorker() throws Exception {
    cluster = LocalStrataCluster.builder().workers(1)
        .set("strata.worker.ufs.io.threads", 1)
        .set("strata.worker.ufs.io.queue.max", 1)
        .build().start();
    FileSystem fs = cluster.client();
    byte[] data = new byte[BLOCK];
    new Random(3).nextBytes(data);
    try (FileOutStream out = fs.createFile("/persisted", CreateFileOptions.defaults().withBlockSize(BLOCK)
        .withWriteType(WriteType.CACHE_THROUGH))) {
      out.write(data);
    }
    fs.free("/persisted", false, false);
    long block = BlockId.of(fs.getStatus("/persisted").id(), 0);
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.worker(0).store().committedBlocks().isEmpty());
    ReadBlockRequest fromUfs = ReadBlockRequest.newBuilder().setBlockId(block).setOffset(0).setLength(BLOCK)
        .setChunkSize(64 << 10).setUfsFallback(true).setNoCache(true).build();
    // the first holds the one UFS thread (it waits for its reader to take more), the second waits in the queue
    Reader first = new Reader(connect(), fromUfs);
    assertThat(first.admitted()).isTrue();
    Reader second = new Reader(connect(), fromUfs);
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.worker(0).openStreams() == 2);
    Reader third = new Reader(connect(), fromUfs);
    assertThat(third.admitted()).isFalse();
    // UNAVAILABLE, not RESOURCE_EXHAUSTED (which clients read as a full cache): a client fails over to another worker.
    assertThat(third.refusal().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(third.refusal().getDescription()).contains("strata.worker.ufs.io.queue.max");
    // once the first reader goes, the queued one is served
    first.call.cancel("done", null);
    assertThat(second.admitted()).isTrue();
    second.call.cancel("done", null);
  }

  @Test
  void serverConnections_areCappedInCalls_andClosedWhenIdle() throws Exception {
    cluster = LocalStrataCluster.builder().workers(1)
        .set("strata.server.rpc.streams.per.connection.max", 1)
        .set("strata.server.rpc.connection.idle.max", "1s")
        .build().start();
    long block = writeBlock(cluster.client(), "/one-stream");
    ManagedChannel a = connect();
    Reader held = new Reader(a, block); // a stalled read: holds the connection's one stream
    assertThat(held.admitted()).isTrue();
    // a second call on that connection waits for a stream (here until its deadline); another connection serves
    CacheBlockRequest cache = CacheBlockRequest.newBuilder().setBlockId(block).build();
    assertThatThrownBy(() -> BlockWorkerServiceGrpc.newBlockingStub(a).withDeadlineAfter(1, TimeUnit.SECONDS)
        .cacheBlock(cache)).isInstanceOfSatisfying(io.grpc.StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
    ManagedChannel b = connect();
    BlockWorkerServiceGrpc.newBlockingStub(b).withDeadlineAfter(10, TimeUnit.SECONDS).cacheBlock(cache);
    held.call.cancel("done", null);
    // a connection without calls is closed by the server after the idle limit (the client goes IDLE)
    await().atMost(Duration.ofSeconds(20)).until(() -> b.getState(false) == io.grpc.ConnectivityState.IDLE);
  }
}
