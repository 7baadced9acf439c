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
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.CacheBlockRequest;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.WriteUfsFileHeader;
import io.strata.proto.WriteUfsFileRequest;
import io.strata.proto.WriteUfsFileResponse;
import io.strata.server.GrpcServer;
import io.strata.server.ufs.UfsManager;
import io.strata.worker.rpc.BlockWorkerService;
import io.strata.worker.store.TieredBlockStore;
import io.strata.worker.ufs.MasterClient.BlockSource;
import io.strata.worker.ufs.MasterClient.UfsSource;
import io.strata.worker.ufs.MasterClient.UfsTarget;
import io.strata.worker.ufs.UfsTestKit.FakeMaster;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The data service's UFS calls over real gRPC, with the master replaced by a table. */
class BlockWorkerServiceUfsTest {
  private static final int BLOCK = 256 * 1024;
  private static final long FILE_ID = 77;

  @TempDir
  Path tmp;
  private TieredBlockStore store;
  private FakeMaster master;
  private UfsManager ufsManager;
  private ExecutorService ufsIo;
  private ExecutorService cacheIo;
  private WorkerUfs ufs;
  private GrpcServer server;
  private ManagedChannel channel;
  private byte[] file;

  @BeforeEach
  void setUp() throws Exception {
    store = UfsTestKit.store(tmp.resolve("store"), 8L * BLOCK);
    master = new FakeMaster();
    ufsManager = new UfsManager();
    ufsIo = Executors.newFixedThreadPool(4);
    cacheIo = Executors.newFixedThreadPool(1);
    ufs = new WorkerUfs(store, master, ufsManager, ufsIo, cacheIo, cacheIo,
        new WorkerUfs.Settings(16 * 1024, 30_000, 8 << 20, 10_000));
    server = new GrpcServer("test-worker", "127.0.0.1", 0, 8 << 20, List.of(new BlockWorkerService(store,
        master::commitBlock, ufs, 64 * 1024))).start();
    channel = GrpcChannels.forAddress("127.0.0.1", server.port(), 8 << 20);
    file = UfsTestKit.content(5, 2 * BLOCK);
    Path f = tmp.resolve("ufs/f");
    Files.createDirectories(f.getParent());
    Files.write(f, file);
    for (int i = 0; i < 2; i++) {
      long id = BlockId.of(FILE_ID, i);
      master.sources.put(id, new BlockSource(id, BLOCK, List.of(),
          new UfsSource(f.toUri().toString(), Map.of(), (long) i * BLOCK, file.length)));
    }
  }

  @AfterEach
  void tearDown() {
    GrpcChannels.close(channel);
    server.close();
    ufsIo.shutdownNow();
    cacheIo.shutdownNow();
    ufs.close();
    ufsManager.close();
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

  private static ReadBlockRequest.Builder readOf(int index, long offset, long length) {
    return ReadBlockRequest.newBuilder().setBlockId(BlockId.of(FILE_ID, index)).setOffset(offset)
        .setLength(length).setChunkSize(10_000);
  }

  @Test
  void readWithUfsFallback_streamsTheRange_andCachesTheBlock() throws Exception {
    byte[] got = read(readOf(1, 3, BLOCK - 3).setUfsFallback(true).build());

    assertThat(got).isEqualTo(Arrays.copyOfRange(file, BLOCK + 3, 2 * BLOCK));
    await().atMost(Duration.ofSeconds(10)).until(() -> master.commits.size() == 1);
    assertThat(UfsTestKit.readBlock(store, BlockId.of(FILE_ID, 1))).isEqualTo(Arrays.copyOfRange(file, BLOCK, 2 * BLOCK));
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
    assertThat(master.commits).hasSize(1);
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
    await().atMost(Duration.ofSeconds(10)).until(() -> master.commits.size() == 1);
    // The store's copy goes bad: a ufs_only read serves the UFS bytes, not the store's.
    long id = BlockId.of(FILE_ID, 1);
    UfsTestKit.corrupt(store, id, 17);
    byte[] got = read(readOf(1, 10, 30_000).setUfsFallback(true).setUfsOnly(true).setUnlisted(true).build());

    assertThat(got).isEqualTo(Arrays.copyOfRange(file, BLOCK + 10, BLOCK + 30_010));
    assertThat(ufs.ufsBlockReads()).isEqualTo(2);
    assertThat(master.commits).as("no announce, no second commit").hasSize(1);
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
    Files.write(tmp.resolve("ufs/f"), new byte[10]);
    assertThatThrownBy(() -> read(readOf(0, 0, 10).setUfsFallback(true).build()))
        .isInstanceOf(StatusRuntimeException.class)
        .satisfies(e -> assertThat(((StatusRuntimeException) e).getStatus().getCode())
            .isEqualTo(Status.Code.FAILED_PRECONDITION))
        .hasMessageContaining("changed in the under file system");
  }

  @Test
  void writeUfsFile_writesTheTarget_andCancelDeletesIt() throws Exception {
    Path target = tmp.resolve("ufs/out/.tmp-1");
    Files.createDirectories(target.getParent()); // the master makes the copy's directory
    master.targets.put(1L, new UfsTarget(target.toUri().toString(), Map.of()));
    CompletableFuture<WriteUfsFileResponse> done = new CompletableFuture<>();
    StreamObserver<WriteUfsFileRequest> req = BlockWorkerServiceGrpc.newStub(channel).writeUfsFile(observer(done));
    req.onNext(WriteUfsFileRequest.newBuilder().setHeader(WriteUfsFileHeader.newBuilder().setFileId(1))
        .setChunk(ByteString.copyFrom(file, 0, 1000)).build());
    req.onNext(WriteUfsFileRequest.newBuilder().setChunk(ByteString.copyFrom(file, 1000, 4000)).build());
    req.onCompleted();
    assertThat(done.get(30, TimeUnit.SECONDS).getLength()).isEqualTo(5000);
    assertThat(Files.readAllBytes(target)).isEqualTo(Arrays.copyOf(file, 5000));

    Path cancelled = tmp.resolve("ufs/out/.tmp-2");
    master.targets.put(2L, new UfsTarget(cancelled.toUri().toString(), Map.of()));
    CompletableFuture<WriteUfsFileResponse> second = new CompletableFuture<>();
    StreamObserver<WriteUfsFileRequest> req2 = BlockWorkerServiceGrpc.newStub(channel).writeUfsFile(observer(second));
    req2.onNext(WriteUfsFileRequest.newBuilder().setHeader(WriteUfsFileHeader.newBuilder().setFileId(2))
        .setChunk(ByteString.copyFrom(file, 0, 1000)).build());
    // The UFS stream buffers: the file exists once created, its bytes come with a flush.
    await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(cancelled));
    req2.onError(new RuntimeException("client gave up"));
    await().atMost(Duration.ofSeconds(10)).until(() -> !Files.exists(cancelled));
  }

  @Test
  void cacheBlock_isAccepted_andCachesTheBlockInTheBackground() {
    boolean accepted = BlockWorkerServiceGrpc.newBlockingStub(channel)
        .cacheBlock(CacheBlockRequest.newBuilder().setBlockId(BlockId.of(FILE_ID, 0)).build()).getAccepted();

    assertThat(accepted).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> master.commits.size() == 1);
    assertThat(store.committedBlocks()).extracting(b -> b.blockId()).containsExactly(BlockId.of(FILE_ID, 0));
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
