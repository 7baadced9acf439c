package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.strata.client.FileSystem;
import io.strata.client.options.MountOptions;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.ExistsRequest;
import io.strata.proto.FileSystemMasterServiceGrpc.FileSystemMasterServiceBlockingStub;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.GetStatusResponse;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.ListStatusResponse;
import io.strata.proto.PingRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The master's reads that need nothing but its memory (Ping, GetStatus and Exists of a loaded path, a small
 * listing) are answered on the transport thread, and lease renewals on their own pool: with every handler thread stuck in an under file system that
 * stopped answering (the status of paths not loaded yet), a client still gets them at once, while a call that
 * needs a handler waits. A real master; the stuck UFS is the local file system behind {@link StallingFileSystem}.
 */
class MasterInlineReadsIntegrationTest extends MasterRpcFixture {
  private static final int HANDLERS = 2;

  @Test
  void readsFromMemory_areAnswered_whileEveryHandlerThreadWaitsOnAStalledUfs() throws Exception {
    FileSystemMasterServiceBlockingStub m = start("strata.server.rpc.threads", Integer.toString(HANDLERS),
        "strata.master.mount.options.unsafe.allowed", "true");
    Path disk = Files.createDirectories(tmp.resolve("stalling"));
    for (int i = 0; i < HANDLERS; i++) {
      Files.writeString(disk.resolve("stall-" + i), "in the ufs " + i);
    }
    try (FileSystem fs = FileSystem.create(cluster.clientConf())) {
      fs.mount("/stalled", disk.toString(), MountOptions.defaults().withProperties(Map.of(
          "fs.file.impl", StallingFileSystem.class.getName())));
      fs.createDirectory("/here");
      fs.createFile("/here/a").close();
      fs.createFile("/here/b").close();
      // Persisted (the master writes an empty file's copy itself) before the handlers stall: that change takes the
      // tree's write lock, and an inline read that meets it held goes to the (then stuck) handler pool.
      await().atMost(Duration.ofSeconds(30)).until(() -> fs.getStatus("/here/a").isPersisted()
          && fs.getStatus("/here/b").isPersisted());
    }
    // A file being written, whose writer renews its lease.
    long open = m.createFile(io.strata.proto.CreateFileRequest.newBuilder().setPath("/here/open").setBlockSize(1 << 20)
        .setClientId("writer-1").build()).getFile().getId();

    StallingFileSystem.arm();
    List<CompletableFuture<GetStatusResponse>> stalled = new ArrayList<>();
    try {
      // Paths not loaded yet: their status needs the UFS, so each call takes a handler thread and waits there.
      for (int i = 0; i < HANDLERS; i++) {
        GetStatusRequest r = GetStatusRequest.newBuilder().setPath("/stalled/stall-" + i).setSyncIntervalMs(-1)
            .build();
        stalled.add(CompletableFuture.supplyAsync(() -> m.withDeadlineAfter(60, TimeUnit.SECONDS).getStatus(r)));
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> StallingFileSystem.waiting() == HANDLERS);

      FileSystemMasterServiceBlockingStub quick = m.withDeadlineAfter(20, TimeUnit.SECONDS);
      quick.ping(PingRequest.getDefaultInstance());
      assertThat(m.withDeadlineAfter(20, TimeUnit.SECONDS).getStatus(GetStatusRequest.newBuilder()
          .setPath("/here/a").setSyncIntervalMs(-1).build()).getFile().getPath()).isEqualTo("/here/a");
      assertThat(m.withDeadlineAfter(20, TimeUnit.SECONDS).exists(ExistsRequest.newBuilder().setPath("/here/b")
          .build()).getExists()).isTrue();
      List<String> listed = new ArrayList<>();
      Iterator<ListStatusResponse> it = m.withDeadlineAfter(20, TimeUnit.SECONDS)
          .listStatus(ListStatusRequest.newBuilder().setPath("/here").setSyncIntervalMs(-1).build());
      it.forEachRemaining(r -> r.getFilesList().forEach(f -> listed.add(f.getPath())));
      assertThat(listed).containsExactlyInAnyOrder("/here/a", "/here/b", "/here/open");
      // A writer's lease renewal does not wait for a handler thread either (its lease would run out meanwhile).
      assertThat(m.withDeadlineAfter(20, TimeUnit.SECONDS).renewLease(io.strata.proto.RenewLeaseRequest.newBuilder()
          .setClientId("writer-1").addFileIds(open).build()).getLostFileIdsList()).isEmpty();

      // A change needs a handler thread: none is free, so it is still waiting when its deadline passes.
      StatusRuntimeException waited = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class,
          () -> m.withDeadlineAfter(1, TimeUnit.SECONDS).createDirectory(CreateDirectoryRequest.newBuilder()
              .setPath("/later").build()));
      assertThat(waited.getStatus().getCode()).isIn(Status.Code.DEADLINE_EXCEEDED, Status.Code.RESOURCE_EXHAUSTED);
      assertThat(stalled).noneMatch(CompletableFuture::isDone);
    } finally {
      StallingFileSystem.release();
    }
    // Released, the stalled calls answer from the UFS, and the handlers serve changes again.
    for (int i = 0; i < HANDLERS; i++) {
      assertThat(stalled.get(i).get(30, TimeUnit.SECONDS).getFile().getLength())
          .isEqualTo(("in the ufs " + i).length());
    }
    m.withDeadlineAfter(10, TimeUnit.SECONDS).createDirectory(CreateDirectoryRequest.newBuilder()
        .setPath("/now").build());
    assertThat(m.exists(ExistsRequest.newBuilder().setPath("/now").build()).getExists()).isTrue();
  }
}
