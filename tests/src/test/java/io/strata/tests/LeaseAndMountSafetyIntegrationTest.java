package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.MountInfo;
import io.strata.client.options.MountOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.OpenFileOptions;
import io.strata.client.options.ReadType;
import io.strata.client.options.WriteType;
import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.PermissionDeniedException;
import io.strata.common.exception.StrataException;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.id.BlockId;
import io.strata.minicluster.LocalStrataCluster;
import io.strata.proto.BlockMasterWorkerServiceGrpc;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.GetBlockSourceRequest;
import io.strata.proto.GetUfsWriteTargetRequest;
import io.strata.proto.FileSystemMasterServiceGrpc;
import com.google.protobuf.ByteString;
import io.grpc.stub.StreamObserver;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.WriteBlockHeader;
import io.strata.proto.WriteBlockRequest;
import io.strata.proto.WriteBlockResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Over a mini cluster with a one-second write lease: a writer whose client keeps renewing keeps its file
 * past several lease periods; a file whose creator never renews is recovered; the worker-facing calls that
 * carry mount credentials answer only registered workers; mounts cannot reach the cluster's journal or a
 * worker's storage dir.
 */
class LeaseAndMountSafetyIntegrationTest {
  /**
   * The master's lease: 3 s against renewals every 200 ms, so a renewer stalled for over a second by a loaded
   * machine (CI on 2 cores; a 1 s lease lapsed so once) still renews in time.
   */
  private static final Duration LEASE = Duration.ofSeconds(3);
  private static LocalStrataCluster cluster;
  private static FileSystem fs;
  private static ManagedChannel masterChannel;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(1)
        .set("strata.master.lease.timeout", LEASE.toMillis() + "ms")
        .set("strata.master.lease.check.interval", "50ms")
        .set("strata.user.lease.renew.interval", "200ms")
        .set("strata.user.block.size.default", "64KB")
        .set("strata.user.stream.chunk.size", "16KB")
        .set("strata.worker.held.files.check.interval", "200ms")
        .build().start();
    fs = cluster.client();
    masterChannel = GrpcChannels.forAddress("localhost", cluster.masterPort(), 64 << 20);
  }

  @AfterAll
  static void stop() {
    GrpcChannels.close(masterChannel);
    cluster.close();
  }

  private static byte[] data(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  @Test
  void writerThatKeepsRenewing_keepsItsFile_pastSeveralLeasePeriods() throws Exception {
    byte[] bytes = data(200_000, 1);
    FileOutStream out = fs.createFile("/lease/kept", CreateFileOptions.defaults().withWriteType(WriteType.MUST_CACHE));
    out.write(bytes, 0, 100_000);
    // Three lease periods pass with the file open; the client's renewer keeps it.
    await().during(LEASE.multipliedBy(3)).atMost(LEASE.multipliedBy(5))
        .until(() -> fs.exists("/lease/kept"));
    out.write(bytes, 100_000, 100_000);
    out.close();
    try (FileInStream in = fs.openFile("/lease/kept")) {
      assertThat(in.readAllBytes()).isEqualTo(bytes);
    }
  }

  @Test
  void fileWhoseCreatorNeverRenews_isRecoveredWithinABound_andItsPathIsFree() throws Exception {
    FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub raw =
        FileSystemMasterServiceGrpc.newBlockingStub(masterChannel).withDeadlineAfter(10, TimeUnit.SECONDS);
    long t0 = System.nanoTime(); // before the create, whose time the lease counts from
    raw.createFile(CreateFileRequest.newBuilder().setPath("/lease/silent").setBlockSize(65536).setRecursive(true)
        .setClientId("a-client-that-dies").build());
    assertThat(fs.exists("/lease/silent")).isTrue();
    await().atMost(LEASE.multipliedBy(10)).pollInterval(Duration.ofMillis(50)).until(() -> !fs.exists("/lease/silent"));
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(LEASE.minusMillis(200));
    try (FileOutStream out = fs.createFile("/lease/silent")) {
      out.write(new byte[] {1, 2, 3});
    }
    assertThat(fs.getStatus("/lease/silent").length()).isEqualTo(3);
  }

  private static java.util.List<Path> tempBlocksOnTheWorker() throws IOException {
    try (java.util.stream.Stream<Path> s = Files.walk(cluster.baseDir().resolve("worker-0"))) {
      return s.filter(Files::isRegularFile).filter(p -> p.getParent().getFileName().toString().equals("tmp")).toList();
    }
  }

  /**
   * A block written for a file that does not exist has no lease whose recovery would end it: the worker's held-files
   * check asks the master about it, and drops it. Before, a client could hold any number of write slots (up to
   * strata.worker.write.blocks.max) for as long as its connection stayed open.
   */
  @Test
  void aTempBlockOfAFileThatDoesNotExist_isDroppedByTheHeldFilesCheck() throws Exception {
    ManagedChannel workerChannel = GrpcChannels.forAddress("localhost", cluster.worker(0).rpcPort(), 64 << 20);
    try {
      java.util.concurrent.CompletableFuture<Throwable> ended = new java.util.concurrent.CompletableFuture<>();
      StreamObserver<WriteBlockRequest> req = BlockWorkerServiceGrpc.newStub(workerChannel).writeBlock(
          new StreamObserver<WriteBlockResponse>() {
            @Override
            public void onNext(WriteBlockResponse value) {}

            @Override
            public void onError(Throwable t) {
              ended.complete(t);
            }

            @Override
            public void onCompleted() {}
          });
      req.onNext(WriteBlockRequest.newBuilder().setHeader(WriteBlockHeader.newBuilder()
          .setBlockId(BlockId.of(987_654, 0)).setMaxLength(65536)).setChunk(ByteString.copyFrom(data(1000, 4)))
          .build());
      // The block may come and go between two looks at the worker's temp dir (the check runs every 200 ms), so
      // what is awaited is its end as its writer sees it, at a message after the check dropped it: the writer
      // keeps sending chunks (the block holds 64 KiB: far more than this sends) until the worker ends its stream.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      int chunks = 0;
      while (!ended.isDone() && System.nanoTime() < deadline && chunks < 60) {
        req.onNext(WriteBlockRequest.newBuilder().setChunk(ByteString.copyFrom(data(16, chunks))).build());
        chunks++;
        try {
          ended.get(200, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException stillOpen) {
          // sends the next chunk
        }
      }
      assertThat(ended).as("the worker ended the write of a file that does not exist").isDone();
      assertThat(ended.get()).hasMessageContaining("file 987654 ended");
      assertThat(tempBlocksOnTheWorker()).isEmpty();
    } finally {
      GrpcChannels.close(workerChannel);
    }
  }

  @Test
  void silentWritersTempBlock_isDroppedByTheWorker_whenTheMasterRecoversTheFile() throws Exception {
    FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub raw =
        FileSystemMasterServiceGrpc.newBlockingStub(masterChannel).withDeadlineAfter(10, TimeUnit.SECONDS);
    long fileId = raw.createFile(CreateFileRequest.newBuilder().setPath("/lease/quiet").setBlockSize(65536)
        .setRecursive(true).setClientId("a-writer-that-goes-quiet").build()).getFile().getId();
    // The writer renews its lease, every 200 ms as a client would, until the test has seen its temp block: the block
    // lives only as long as the file, and without renewals a loaded machine could let the lease lapse (and the
    // block go) before a look at the worker's temp dir found it.
    java.util.List<Long> lostWhileRenewing = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.concurrent.ScheduledExecutorService renewer =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    java.util.concurrent.Future<?> renewals = renewer.scheduleWithFixedDelay(() -> lostWhileRenewing.addAll(
        FileSystemMasterServiceGrpc.newBlockingStub(masterChannel).withDeadlineAfter(10, TimeUnit.SECONDS)
            .renewLease(io.strata.proto.RenewLeaseRequest.newBuilder().setClientId("a-writer-that-goes-quiet")
                .addFileIds(fileId).build()).getLostFileIdsList()), 0, 200, TimeUnit.MILLISECONDS);
    ManagedChannel workerChannel = GrpcChannels.forAddress("localhost", cluster.worker(0).rpcPort(), 64 << 20);
    try {
      StreamObserver<WriteBlockRequest> req = BlockWorkerServiceGrpc.newStub(workerChannel).writeBlock(
          new StreamObserver<WriteBlockResponse>() {
            @Override
            public void onNext(WriteBlockResponse value) {}

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {}
          });
      // Half a block, then silence: the connection stays up, so only the master's word ends the temp block.
      req.onNext(WriteBlockRequest.newBuilder().setHeader(WriteBlockHeader.newBuilder()
          .setBlockId(BlockId.of(fileId, 0)).setMaxLength(65536)).setChunk(ByteString.copyFrom(data(30_000, 3)))
          .build());
      await().atMost(Duration.ofSeconds(30)).until(() -> !tempBlocksOnTheWorker().isEmpty());
      assertThat(renewals).as("the renewals go on (one that failed would end them)").isNotDone();
      renewer.shutdownNow(); // the writer goes quiet
      assertThat(renewer.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(lostWhileRenewing).as("files the renewing writer lost").isEmpty();
      await().atMost(LEASE.multipliedBy(10)).until(() -> !fs.exists("/lease/quiet"));
      // Dropped at the next heartbeat (every second), long before the worker's 5 min temp-block timeout.
      await().atMost(Duration.ofSeconds(10)).until(() -> tempBlocksOnTheWorker().isEmpty());
      req.onError(new RuntimeException("test done"));
    } finally {
      renewer.shutdownNow();
      GrpcChannels.close(workerChannel);
    }
  }

  // ---- worker-facing calls ----

  @Test
  void workerFacingCallsWithMountCredentials_refuseCallersThatAreNotRegisteredWorkers() throws Exception {
    byte[] bytes = data(100_000, 2);
    try (FileOutStream out = fs.createFile("/creds/through",
        CreateFileOptions.defaults().withWriteType(WriteType.CACHE_THROUGH))) {
      out.write(bytes);
    }
    long fileId = fs.getStatus("/creds/through").id();
    long workerId = fs.getWorkers().get(0).id();
    BlockMasterWorkerServiceGrpc.BlockMasterWorkerServiceBlockingStub raw =
        BlockMasterWorkerServiceGrpc.newBlockingStub(masterChannel).withDeadlineAfter(10, TimeUnit.SECONDS);
    for (long id : new long[] {0, workerId}) {
      StrataException e = BadInputIntegrationTest.rawError(() -> raw.getBlockSource(GetBlockSourceRequest.newBuilder()
          .setBlockId(BlockId.of(fileId, 0)).setWorkerId(id).setWorkerToken("guessed").build()));
      assertThat(e).isInstanceOf(PermissionDeniedException.class);
      assertThat(e.code()).isEqualTo(ErrorCode.PERMISSION_DENIED);
      assertThat(e.getMessage()).contains("GetBlockSource").contains("registered workers");
    }
    FileOutStream open = fs.createFile("/creds/open", CreateFileOptions.defaults().withWriteType(WriteType.THROUGH));
    StrataException e = BadInputIntegrationTest.rawError(() -> raw.getUfsWriteTarget(GetUfsWriteTargetRequest.newBuilder()
        .setFileId(open.status().id()).setWorkerId(workerId).build()));
    assertThat(e).isInstanceOf(PermissionDeniedException.class);
    // The batched call too, for the live worker without its token and for a worker id no one registered.
    for (long id : new long[] {workerId, 987_654}) {
      StrataException batch = BadInputIntegrationTest.rawError(() -> raw.getUfsWriteTargets(
          io.strata.proto.GetUfsWriteTargetsRequest.newBuilder().addTargets(GetUfsWriteTargetRequest.newBuilder()
              .setFileId(open.status().id()).setWorkerId(id).setWorkerToken("guessed")).build()));
      assertThat(batch).isInstanceOf(PermissionDeniedException.class);
      assertThat(batch.getMessage()).contains("GetUfsWriteTargets");
    }
    // A heartbeat or a commit in the live worker's name, without its token: refused, so no persist command
    // (with the mount's options) goes out and no block location is added or dropped.
    StrataException hb = BadInputIntegrationTest.rawError(() -> raw.heartbeat(
        io.strata.proto.WorkerHeartbeatRequest.newBuilder().setWorkerId(workerId).setWorkerToken("guessed")
            .addRemovedBlockIds(BlockId.of(fileId, 0)).build()));
    assertThat(hb).isInstanceOf(PermissionDeniedException.class);
    assertThat(hb.getMessage()).contains("Heartbeat").contains("registration token");
    StrataException commit = BadInputIntegrationTest.rawError(() -> raw.commitBlock(
        io.strata.proto.CommitBlockRequest.newBuilder().setWorkerId(workerId).setBlockId(BlockId.of(fileId, 1))
            .setLength(1).setTier("MEM").build()));
    assertThat(commit).isInstanceOf(PermissionDeniedException.class);
    assertThat(commit.getMessage()).contains("CommitBlock");
    assertThat(cluster.master().fileSystemMaster().blockMaster().getBlock(BlockId.of(fileId, 0)).locations())
        .as("the spoofed removal dropped nothing").hasSize(1);
    open.write(new byte[] {7});
    open.close();
    // The real worker still gets both: through writes complete, and freed blocks come back from the UFS.
    fs.free("/creds/through", false, false);
    await().atMost(Duration.ofSeconds(10)).until(() -> {
      var b = cluster.master().fileSystemMaster().blockMaster().getBlock(BlockId.of(fileId, 0));
      return b == null || b.locations().isEmpty();
    });
    try (FileInStream in = fs.openFile("/creds/through", OpenFileOptions.defaults().withReadType(ReadType.CACHE))) {
      assertThat(in.readAllBytes()).isEqualTo(bytes);
    }
    assertThat(fs.getStatus("/creds/open").length()).isEqualTo(1);
  }

  // ---- mounts ----

  @Test
  void masterWhoseRootUfsLiesInsideItsJournal_refusesToStart(@TempDir Path dir) throws Exception {
    Path inside = Files.createDirectories(dir.resolve("journal/ufs"));
    LocalStrataCluster bad = LocalStrataCluster.builder().workers(0).baseDir(dir)
        .set("strata.master.mount.table.root.ufs", inside.toString()).build();
    try {
      assertThatThrownBy(bad::start).isInstanceOf(InvalidArgumentException.class)
          .hasMessageContaining("root under file system").hasMessageContaining("overlaps");
    } finally {
      bad.close();
    }
  }

  @Test
  void mountsOfTheJournalOrAWorkersStorageDir_areRefused() throws Exception {
    fs.createDirectory("/mnt");
    Path journal = cluster.baseDir().resolve("journal");
    Path workerDir = cluster.baseDir().resolve("worker-0");
    for (Path p : new Path[] {journal, workerDir, cluster.baseDir()}) {
      assertThat(p).exists();
      assertThatThrownBy(() -> fs.mount("/mnt/x", p.toString()))
          .as(p.toString()).isInstanceOf(InvalidArgumentException.class).hasMessageContaining("overlaps");
    }
    Path ok = Files.createDirectories(cluster.baseDir().resolve("elsewhere"));
    assertThatThrownBy(() -> fs.mount("/mnt/x", ok.toString(),
        MountOptions.defaults().withProperties(Map.of("fs.file.impl", "x.Evil"))))
        .isInstanceOf(PermissionDeniedException.class).hasMessageContaining("fs.file.impl");
    // A view file system whose mount table links a path to the journal: the link option and the scheme are refused.
    assertThatThrownBy(() -> fs.mount("/mnt/v", "viewfs://c/", MountOptions.defaults().withProperties(
        Map.of("fs.viewfs.mounttable.c.link./j", journal.toUri().toString()))))
        .isInstanceOf(PermissionDeniedException.class).hasMessageContaining("viewfs");
    assertThatThrownBy(() -> fs.mount("/mnt/v", "viewfs://c/"))
        .isInstanceOf(PermissionDeniedException.class).hasMessageContaining("maps its paths onto other file systems");
    assertThatThrownBy(() -> fs.mount("/mnt/h", "har://file-localhost" + journal + "/x.har"))
        .isInstanceOf(PermissionDeniedException.class).hasMessageContaining("har");
    assertThat(fs.exists("/mnt/v")).isFalse();
    fs.mount("/mnt/x", ok.toString());
    assertThat(fs.getMountTable()).extracting(MountInfo::path).contains("/mnt/x");
  }
}
