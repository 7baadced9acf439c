package io.strata.worker.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.id.BlockId;
import io.strata.master.file.WriteType;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.CacheBlockRequest;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.WriteUfsFileHeader;
import io.strata.proto.WriteUfsFileRequest;
import io.strata.proto.WriteUfsFileResponse;
import io.strata.server.GrpcServer;
import io.strata.server.ufs.UfsManager;
import io.strata.worker.InProcessMaster;
import io.strata.worker.rpc.BlockWorkerService;
import io.strata.worker.store.TieredBlockStore;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The data service's UFS calls over real gRPC, against a real master in this JVM (one for the class) through the
 * worker's master sync registered there (one registration a test): reads of a file persisted in the master's root
 * under file system (a file a test), commits checked in its block master, UFS writes of files created there.
 */
class BlockWorkerServiceUfsTest {
  private static final int BLOCK = 256 * 1024;

  @RegisterExtension
  static final UfsTestKit.MasterPerClass MASTER = new UfsTestKit.MasterPerClass(BLOCK);
  private InProcessMaster master;

  @TempDir
  Path tmp;
  private InProcessMaster.Worker worker;
  private TieredBlockStore store;
  private long fileId;
  private Path ufsFile;
  private UfsManager ufsManager;
  private ExecutorService ufsIo;
  private ExecutorService cacheIo;
  private WorkerUfs ufs;
  private GrpcServer server;
  private ManagedChannel channel;
  private byte[] file;

  @BeforeEach
  void setUp(TestInfo test) throws Exception {
    master = MASTER.get();
    worker = UfsTestKit.worker(master, tmp.resolve("store"), 8L * BLOCK);
    store = worker.store();
    ufsManager = new UfsManager();
    ufsIo = Executors.newFixedThreadPool(4);
    cacheIo = Executors.newFixedThreadPool(1);
    MasterClient client = worker.client();
    ufs = new WorkerUfs(store, client, ufsManager, ufsIo, cacheIo, cacheIo,
        new WorkerUfs.Settings(16 * 1024, 30_000, 8 << 20, 10_000));
    server = new GrpcServer("test-worker", "127.0.0.1", 0, 8 << 20, List.of(new BlockWorkerService(store,
        client::commitBlock, ufs, 64 * 1024))).start();
    channel = GrpcChannels.forAddress("127.0.0.1", server.port(), 8 << 20);
    file = UfsTestKit.content(5, 2 * BLOCK);
    String name = "in/" + test.getTestMethod().orElseThrow().getName();
    fileId = master.persistedFile(name, file);
    ufsFile = master.ufs().resolve(name);
  }

  @AfterEach
  void tearDown() {
    GrpcChannels.close(channel);
    server.close();
    ufsIo.shutdownNow();
    cacheIo.shutdownNow();
    ufs.close();
    ufsManager.close();
    worker.close();
  }

  private long block(int index) {
    return BlockId.of(fileId, index);
  }

  private byte[] read(ReadBlockRequest req) {
    Iterator<ReadBlockResponse> it = BlockWorkerServiceGrpc.newBlockingStub(channel)
        .withDeadlineAfter(30, TimeUnit.SECONDS).readBlock(req);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    while (it.hasNext()) {
      byte[] b = it.next().getChunk().toByteArray();
      out.write(b, 0, b.length);
    }
    return out.toByteArray();
  }

  private ReadBlockRequest.Builder readOf(int index, long offset, long length) {
    return ReadBlockRequest.newBuilder().setBlockId(block(index)).setOffset(offset)
        .setLength(length).setChunkSize(10_000);
  }

  @Test
  void readWithUfsFallback_streamsTheRange_andCachesTheBlock() throws Exception {
    byte[] got = read(readOf(1, 3, BLOCK - 3).setUfsFallback(true).build());

    assertThat(got).isEqualTo(Arrays.copyOfRange(file, BLOCK + 3, 2 * BLOCK));
    await().atMost(Duration.ofSeconds(10)).until(() -> master.listed(block(1)).equals(Map.of(block(1), "MEM")));
    assertThat(UfsTestKit.readBlock(store, block(1))).isEqualTo(Arrays.copyOfRange(file, BLOCK, 2 * BLOCK));
    // Now cached: the next read comes from the store, with no UFS read.
    assertThat(read(readOf(1, 0, 10).setUfsFallback(true).build())).isEqualTo(Arrays.copyOfRange(file, BLOCK, BLOCK + 10));
    assertThat(ufs.ufsBlockReads()).isEqualTo(1);
  }

  @Test
  void eightConcurrentGrpcReaders_causeOneUfsRead() throws Exception {
    List<CompletableFuture<byte[]>> reads = new ArrayList<>();
    ExecutorService clients = Executors.newFixedThreadPool(8);
    try {
      for (int i = 0; i < 8; i++) {
        long off = i * 1000L;
        reads.add(CompletableFuture.supplyAsync(() -> read(readOf(0, off, 50_000).setUfsFallback(true).build()),
            clients));
      }
      for (int i = 0; i < 8; i++) {
        assertThat(reads.get(i).get(30, TimeUnit.SECONDS)).isEqualTo(Arrays.copyOfRange(file, i * 1000, i * 1000 + 50_000));
      }
    } finally {
      clients.shutdownNow();
    }
    assertThat(ufs.ufsBlockReads()).isEqualTo(1);
    assertThat(worker.commitsSent()).isEqualTo(1);
    assertThat(master.listed(block(0), block(1))).isEqualTo(Map.of(block(0), "MEM"));
  }

  /**
   * Over real gRPC with manual flow control (as the client reads) and a small flow-control window: a load's first
   * reader, asking for checksums, takes one message and then stops. The load does not wait for it: the block is
   * committed, and a second reader gets it whole, while the first still holds part of its range. When the first reads
   * again it gets the rest from the store, from where the load left it, unchecksummed as the start came: its range is
   * byte-exact, no byte missing or repeated. One UFS read.
   */
  @Test
  void stalledFirstGrpcReader_doesNotHoldUpTheLoad_andGetsTheRestFromTheStore() throws Exception {
    ManagedChannel small = GrpcChannels.forAddress("127.0.0.1", server.port(), 8 << 20, 64 * 1024);
    try {
      long off = 3;
      long len = BLOCK - 3;
      List<ReadBlockResponse> got = java.util.Collections.synchronizedList(new ArrayList<>());
      CompletableFuture<Void> firstDone = new CompletableFuture<>();
      CompletableFuture<io.grpc.stub.ClientCallStreamObserver<ReadBlockRequest>> call = new CompletableFuture<>();
      BlockWorkerServiceGrpc.newStub(small).withDeadlineAfter(60, TimeUnit.SECONDS).readBlock(
          readOf(0, off, len).setUfsFallback(true).setChecksums(true).build(),
          new io.grpc.stub.ClientResponseObserver<ReadBlockRequest, ReadBlockResponse>() {
            @Override
            public void beforeStart(io.grpc.stub.ClientCallStreamObserver<ReadBlockRequest> stream) {
              stream.disableAutoRequestWithInitial(1);
              call.complete(stream);
            }

            @Override
            public void onNext(ReadBlockResponse value) {
              got.add(value);
            }

            @Override
            public void onError(Throwable t) {
              firstDone.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
              firstDone.complete(null);
            }
          });
      await().atMost(Duration.ofSeconds(10)).until(() -> got.size() == 1);
      // The load runs on, though the first reader takes nothing more.
      await().atMost(Duration.ofSeconds(20)).until(() -> master.listed(block(0)).equals(Map.of(block(0), "MEM")));
      assertThat(read(readOf(0, 0, BLOCK).setUfsFallback(true).build()))
          .isEqualTo(Arrays.copyOfRange(file, 0, BLOCK));
      assertThat(firstDone).as("the first reader, still stalled, is not answered yet").isNotDone();
      assertThat(got).hasSize(1);

      call.get().request(Integer.MAX_VALUE);
      firstDone.get(30, TimeUnit.SECONDS);
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      for (ReadBlockResponse r : got) {
        assertThat(r.getChunkCrc32CCount()).as("a reader sent unchecksummed UFS bytes gets the rest unchecksummed")
            .isZero();
        byte[] b = r.getChunk().toByteArray();
        bytes.write(b, 0, b.length);
      }
      assertThat(bytes.toByteArray()).isEqualTo(Arrays.copyOfRange(file, (int) off, (int) (off + len)));
      assertThat(ufs.ufsBlockReads()).isEqualTo(1);
      assertThat(worker.commitsSent()).isEqualTo(1);
    } finally {
      GrpcChannels.close(small);
    }
  }

  @Test
  void readWithoutUfsFallback_ofABlockNotHere_isNotFound() {
    assertThatThrownBy(() -> read(readOf(0, 0, 10).build())).isInstanceOf(StatusRuntimeException.class)
        .satisfies(e -> assertThat(((StatusRuntimeException) e).getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
    assertThat(ufs.ufsBlockReads()).isZero();
  }

  @Test
  void noCacheRead_streamsFromTheUfs_andCachesNothing() {
    byte[] got = read(readOf(0, 100, 70_000).setUfsFallback(true).setNoCache(true).build());

    assertThat(got).isEqualTo(Arrays.copyOfRange(file, 100, 70_100));
    assertThat(store.committedBlocks()).isEmpty();
    assertThat(ufs.ufsBlockReads()).isEqualTo(1);
  }

  @Test
  void ufsOnlyRead_ofACachedBlock_readsTheUfs_andLeavesTheStoreCopyAndTheMasterAlone() throws Exception {
    read(readOf(1, 0, BLOCK).setUfsFallback(true).build());
    await().atMost(Duration.ofSeconds(10)).until(() -> master.listed(block(1)).equals(Map.of(block(1), "MEM")));
    // The store's copy goes bad: a ufs_only read serves the UFS bytes, not the store's.
    long id = block(1);
    UfsTestKit.corrupt(store, id, 17);
    byte[] got = read(readOf(1, 10, 30_000).setUfsFallback(true).setUfsOnly(true).setUnlisted(true).build());

    assertThat(got).isEqualTo(Arrays.copyOfRange(file, BLOCK + 10, BLOCK + 30_010));
    assertThat(ufs.ufsBlockReads()).isEqualTo(2);
    assertThat(worker.commitsSent()).as("no announce, no second commit").isEqualTo(1);
    assertThat(master.listed(id)).isEqualTo(Map.of(id, "MEM"));
    assertThat(UfsTestKit.readBlock(store, id)[17]).as("the store's copy untouched (its removal is the master's)")
        .isNotEqualTo(file[BLOCK + 17]);
  }

  @Test
  void ufsOnlyRead_withoutUfsFallback_isInvalid() {
    assertThatThrownBy(() -> read(readOf(0, 0, 10).setUfsOnly(true).build())).isInstanceOf(StatusRuntimeException.class)
        .satisfies(e -> assertThat(((StatusRuntimeException) e).getStatus().getCode())
            .isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("needs ufs_fallback");
    assertThat(ufs.ufsBlockReads()).isZero();
  }

  @Test
  void readOfAChangedFile_isFailedPrecondition() throws Exception {
    Files.write(ufsFile, new byte[10]);
    assertThatThrownBy(() -> read(readOf(0, 0, 10).setUfsFallback(true).build()))
        .isInstanceOf(StatusRuntimeException.class)
        .satisfies(e -> assertThat(((StatusRuntimeException) e).getStatus().getCode())
            .isEqualTo(Status.Code.FAILED_PRECONDITION))
        .hasMessageContaining("changed in the under file system");
  }

  @Test
  void writeUfsFile_writesTheTarget_andCancelDeletesIt() throws Exception {
    long through = UfsTestKit.fileBeingWritten(master, "/out/through", BLOCK, WriteType.THROUGH);
    CompletableFuture<WriteUfsFileResponse> done = new CompletableFuture<>();
    StreamObserver<WriteUfsFileRequest> req = BlockWorkerServiceGrpc.newStub(channel).writeUfsFile(observer(done));
    req.onNext(WriteUfsFileRequest.newBuilder().setHeader(WriteUfsFileHeader.newBuilder().setFileId(through))
        .setChunk(ByteString.copyFrom(file, 0, 1000)).build());
    req.onNext(WriteUfsFileRequest.newBuilder().setChunk(ByteString.copyFrom(file, 1000, 4000)).build());
    req.onCompleted();
    assertThat(done.get(30, TimeUnit.SECONDS).getLength()).isEqualTo(5000);
    List<Path> written = UfsTestKit.copiesBeingWritten(master, "/out/through"); // where the master said
    assertThat(written).hasSize(1);
    assertThat(Files.readAllBytes(written.get(0))).isEqualTo(Arrays.copyOf(file, 5000));
    assertThat(master.fs().completeFile("/out/through", through, 5000).persisted()).isTrue();
    assertThat(Files.readAllBytes(master.ufs().resolve("out/through"))).isEqualTo(Arrays.copyOf(file, 5000));

    long async = UfsTestKit.fileBeingWritten(master, "/out/async", BLOCK, WriteType.ASYNC_THROUGH);
    CompletableFuture<WriteUfsFileResponse> second = new CompletableFuture<>();
    StreamObserver<WriteUfsFileRequest> req2 = BlockWorkerServiceGrpc.newStub(channel).writeUfsFile(observer(second));
    req2.onNext(WriteUfsFileRequest.newBuilder().setHeader(WriteUfsFileHeader.newBuilder().setFileId(async))
        .setChunk(ByteString.copyFrom(file, 0, 1000)).build());
    // The UFS stream buffers: the file exists once created, its bytes come with a flush.
    await().atMost(Duration.ofSeconds(10)).until(() -> UfsTestKit.copiesBeingWritten(master, "/out/async").size() == 1);
    req2.onError(new RuntimeException("client gave up"));
    await().atMost(Duration.ofSeconds(10)).until(() -> UfsTestKit.copiesBeingWritten(master, "/out/async").isEmpty());
  }

  /**
   * A UFS write whose client goes silent is ended by the idle watch, whose one timer thread every watched stream
   * shares: the abort (a UFS close and delete) runs on the UFS pool, not there. Here that pool's one thread is held
   * busy, so the client hears of the idle end while its partial copy is still there, and the copy goes once the pool
   * is free.
   */
  @Test
  void idleUfsWrite_isAbortedOnTheUfsPool_notTheTimerThread() throws Exception {
    ExecutorService oneIo = Executors.newSingleThreadExecutor();
    java.util.concurrent.ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    CountDownLatch poolHeld = new CountDownLatch(1);
    WorkerUfs busyUfs = new WorkerUfs(store, worker.client(), ufsManager, oneIo, cacheIo, cacheIo,
        new WorkerUfs.Settings(16 * 1024, 30_000, 8 << 20, 10_000));
    io.strata.worker.rpc.IdleWatch watch = new io.strata.worker.rpc.IdleWatch(timers, 300,
        "strata.worker.ufs.write.idle.timeout");
    GrpcServer idleServer = new GrpcServer("idle-worker", "127.0.0.1", 0, 8 << 20, List.of(new BlockWorkerService(
        store, worker.client()::commitBlock, busyUfs, 64 * 1024, 0, io.strata.worker.rpc.IdleWatch.NONE, watch,
        true))).start();
    ManagedChannel idleChannel = GrpcChannels.forAddress("127.0.0.1", idleServer.port(), 8 << 20);
    // The watch's sweeps wait (its one timer thread held) until the UFS pool is held: the write idles 300 ms after
    // its chunk, and a sweep then could end it, and its abort delete the copy, before the test held the pool.
    CountDownLatch sweepsHeld = new CountDownLatch(1);
    timers.execute(() -> {
      try {
        sweepsHeld.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    try {
      long id = UfsTestKit.fileBeingWritten(master, "/out/silent", BLOCK, WriteType.THROUGH);
      CompletableFuture<WriteUfsFileResponse> done = new CompletableFuture<>();
      StreamObserver<WriteUfsFileRequest> req = BlockWorkerServiceGrpc.newStub(idleChannel).writeUfsFile(
          observer(done));
      req.onNext(WriteUfsFileRequest.newBuilder().setHeader(WriteUfsFileHeader.newBuilder().setFileId(id))
          .setChunk(ByteString.copyFrom(file, 0, 1000)).build());
      await().atMost(Duration.ofSeconds(10)).until(() -> UfsTestKit.copiesBeingWritten(master, "/out/silent")
          .size() == 1);
      oneIo.execute(() -> {
        try {
          poolHeld.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      sweepsHeld.countDown();

      assertThatThrownBy(() -> done.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(StatusRuntimeException.class)
          .hasMessageContaining("strata.worker.ufs.write.idle.timeout");
      assertThat(UfsTestKit.copiesBeingWritten(master, "/out/silent")).as("the abort waits for the UFS pool")
          .hasSize(1);
      poolHeld.countDown();
      await().atMost(Duration.ofSeconds(10)).until(() -> UfsTestKit.copiesBeingWritten(master, "/out/silent")
          .isEmpty());
    } finally {
      sweepsHeld.countDown();
      poolHeld.countDown();
      GrpcChannels.close(idleChannel);
      idleServer.close();
      watch.close();
      timers.shutdownNow();
      oneIo.shutdownNow();
    }
  }

  @Test
  void cacheBlock_isAccepted_andCachesTheBlockInTheBackground() {
    boolean accepted = BlockWorkerServiceGrpc.newBlockingStub(channel)
        .cacheBlock(CacheBlockRequest.newBuilder().setBlockId(block(0)).build()).getAccepted();

    assertThat(accepted).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> master.listed(block(0)).equals(Map.of(block(0), "MEM")));
    assertThat(store.committedBlocks()).extracting(b -> b.blockId()).containsExactly(block(0));
  }

  private static <T> StreamObserver<T> observer(CompletableFuture<T> f) {
    return new StreamObserver<>() {
      @Override
      public void onNext(T value) {
        f.complete(value);
      }

      @Override
      public void onError(Throwable t) {
        f.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {}
    };
  }
}
