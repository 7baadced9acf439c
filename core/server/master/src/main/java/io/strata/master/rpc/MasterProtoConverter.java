package io.strata.master.rpc;

import io.strata.common.net.TieredIdentity;
import io.strata.common.net.WorkerAddress;
import io.strata.master.block.BlockReport;
import io.strata.master.block.BlockState;
import io.strata.master.block.StorageDirState;
import io.strata.master.block.WorkerState;
import io.strata.master.file.FileInfo;
import io.strata.master.file.MasterReplies;
import io.strata.master.file.MountTable;
import io.strata.proto.MountInfoProto;
import io.strata.proto.PersistCommandProto;
import io.strata.proto.PersistResultProto;
import io.strata.proto.BlockInfoProto;
import io.strata.proto.BlockLocationProto;
import io.strata.proto.BlockReportProto;
import io.strata.proto.FileBlockInfoProto;
import io.strata.proto.FileInfoProto;
import io.strata.proto.StorageDirProto;
import io.strata.proto.WorkerAddressProto;
import io.strata.proto.WorkerInfoProto;
import java.util.ArrayList;
import java.util.List;

/** The master's one meeting point of protos and domain types. Stateless. */
final class MasterProtoConverter {
  private MasterProtoConverter() {}

  static FileInfoProto toProto(FileInfo f) {
    return FileInfoProto.newBuilder().setId(f.id()).setPath(f.path()).setName(f.name())
        .setDirectory(f.directory()).setLength(f.length()).setBlockSize(f.blockSize())
        .setComplete(f.complete()).setCreationTimeMs(f.creationTimeMs())
        .setModificationTimeMs(f.modificationTimeMs()).setOwner(f.owner()).setGroup(f.group())
        .setMode(f.mode()).setChildCount(f.childCount()).setPersistenceState(f.persistence().name())
        .setPinned(f.pinned()).setTtlMs(f.ttlMs()).setTtlAction(f.ttlAction().name()).setUfsPath(f.ufsPath())
        .setMountPoint(f.mountPoint()).setAccessTimeMs(f.accessTimeMs()).build();
  }

  /** A client's attribute change; an unset field is left alone. */
  static io.strata.master.file.AttributeChange fromProto(io.strata.proto.SetAttributeRequest r)
      throws io.strata.common.exception.InvalidArgumentException {
    return new io.strata.master.file.AttributeChange(r.hasPinned() ? r.getPinned() : null,
        r.hasTtlMs() ? r.getTtlMs() : null,
        r.hasTtlAction() ? io.strata.master.file.TtlAction.parse(r.getTtlAction()) : null,
        r.hasOwner() ? r.getOwner() : null, r.hasGroup() ? r.getGroup() : null, r.hasMode() ? r.getMode() : null,
        r.hasModificationTimeMs() ? r.getModificationTimeMs() : null,
        r.hasAccessTimeMs() ? r.getAccessTimeMs() : null, r.getRecursive());
  }

  /** A mount as clients see it: credentials in its options masked. */
  static MountInfoProto toProto(MountTable.MountInfo m) {
    MountInfoProto.Builder b = MountInfoProto.newBuilder().setPath(m.path()).setUfsUri(m.ufsUri())
        .setReadOnly(m.readOnly()).setShared(m.shared());
    for (java.util.Map.Entry<String, String> e : m.options().entrySet()) {
      b.putOptions(e.getKey(), io.strata.server.ufs.Redact.masked(e.getKey(), e.getValue()));
    }
    return b.build();
  }

  static BlockInfoProto toProto(BlockState block) {
    BlockInfoProto.Builder info = BlockInfoProto.newBuilder().setBlockId(block.blockId()).setLength(block.length());
    for (BlockState.Location loc : block.locations()) {
      info.addLocations(toProto(loc));
    }
    return info.build();
  }

  static BlockLocationProto toProto(BlockState.Location loc) {
    return BlockLocationProto.newBuilder().setWorkerId(loc.worker().id()).setAddress(toProto(loc.worker().address()))
        .setTier(loc.tier()).build();
  }

  static PersistCommandProto toProto(MasterReplies.PersistCommand c) {
    PersistCommandProto.Builder b = PersistCommandProto.newBuilder().setFileId(c.fileId()).setUfsUri(c.ufsUri())
        .putAllUfsOptions(c.options());
    for (BlockState s : c.blocks()) {
      b.addBlocks(toProto(s));
    }
    return b.build();
  }

  static List<MasterReplies.PersistResult> fromPersistProtos(List<PersistResultProto> results) {
    List<MasterReplies.PersistResult> out = new ArrayList<>(results.size());
    for (PersistResultProto r : results) {
      out.add(new MasterReplies.PersistResult(r.getFileId(), r.getOk(), r.getError(), r.getLength(), r.getUfsUri()));
    }
    return out;
  }

  static FileInfoProto toProto(FileInfo f, List<BlockState> blocks) {
    FileInfoProto.Builder b = toProto(f).toBuilder();
    long offset = 0;
    for (BlockState block : blocks) {
      b.addBlocks(FileBlockInfoProto.newBuilder().setBlock(toProto(block)).setOffset(offset));
      offset += f.blockSize();
    }
    return b.build();
  }

  static WorkerAddressProto toProto(WorkerAddress a) {
    return WorkerAddressProto.newBuilder().setHost(a.host()).setRpcPort(a.rpcPort())
        .setNode(a.identity().node()).setRack(a.identity().rack()).setTransferPort(a.transferPort())
        .setWebPort(a.webPort()).build();
  }

  /** A call's request id, or null when the client sent none (or one without a client id). */
  static io.strata.master.file.RequestId requestId(boolean set, io.strata.proto.RequestIdProto p)
      throws io.strata.common.exception.InvalidArgumentException {
    if (!set || p.getClientId().isEmpty()) {
      return null;
    }
    // Kept (up to a thousand per client) in the table of recent requests, and journaled with each answer.
    io.strata.master.file.Names.check("client id", p.getClientId(), "Request id of call " + p.getCallId());
    return new io.strata.master.file.RequestId(p.getClientId(), p.getCallId());
  }

  static WorkerAddress fromProto(WorkerAddressProto p) {
    return new WorkerAddress(p.getHost(), p.getRpcPort(), new TieredIdentity(p.getNode(), p.getRack()),
        p.getTransferPort(), p.getWebPort());
  }

  static WorkerInfoProto toProto(WorkerState w) {
    return WorkerInfoProto.newBuilder().setId(w.id()).setAddress(toProto(w.address()))
        .setCapacityBytes(w.capacityBytes()).setUsedBytes(w.usedBytes())
        .setLastHeartbeatMs(w.lastHeartbeatMs()).setBlockCount(w.blockCount())
        .setStartTimeMs(w.startTimeMs()).addAllDirs(toDirProtos(w.dirs())).build();
  }

  static List<StorageDirProto> toDirProtos(List<StorageDirState> dirs) {
    List<StorageDirProto> out = new ArrayList<>(dirs.size());
    for (StorageDirState d : dirs) {
      out.add(StorageDirProto.newBuilder().setTier(d.tier()).setTierOrdinal(d.tierOrdinal()).setPath(d.path())
          .setGood(d.good()).setCapacityBytes(d.capacityBytes()).setUsedBytes(d.usedBytes())
          .setLostBlocks(d.lostBlocks()).build());
    }
    return out;
  }

  static List<StorageDirState> fromDirProtos(List<StorageDirProto> dirs) {
    List<StorageDirState> out = new ArrayList<>(dirs.size());
    for (StorageDirProto d : dirs) {
      out.add(new StorageDirState(d.getTier(), d.getTierOrdinal(), d.getPath(), d.getGood(), d.getCapacityBytes(),
          d.getUsedBytes(), d.getLostBlocks()));
    }
    return out;
  }

  static List<BlockReport> fromProto(List<BlockReportProto> reports) {
    List<BlockReport> out = new ArrayList<>(reports.size());
    for (BlockReportProto r : reports) {
      out.add(new BlockReport(r.getBlockId(), r.getLength(), r.getTier()));
    }
    return out;
  }
}
