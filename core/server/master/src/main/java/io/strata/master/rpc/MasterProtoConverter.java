package io.strata.master.rpc;

import io.strata.common.net.WorkerAddress;
import io.strata.master.block.BlockReport;
import io.strata.master.block.BlockState;
import io.strata.master.block.WorkerState;
import io.strata.master.file.FileInfo;
import io.strata.proto.BlockInfoProto;
import io.strata.proto.BlockLocationProto;
import io.strata.proto.BlockReportProto;
import io.strata.proto.FileBlockInfoProto;
import io.strata.proto.FileInfoProto;
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
        .setMode(f.mode()).setChildCount(f.childCount()).build();
  }

  static FileInfoProto toProto(FileInfo f, List<BlockState> blocks) {
    FileInfoProto.Builder b = toProto(f).toBuilder();
    long offset = 0;
    for (BlockState block : blocks) {
      BlockInfoProto.Builder info = BlockInfoProto.newBuilder().setBlockId(block.blockId())
          .setLength(block.length());
      for (BlockState.Location loc : block.locations()) {
        info.addLocations(BlockLocationProto.newBuilder().setWorkerId(loc.worker().id())
            .setAddress(toProto(loc.worker().address())).setTier(loc.tier()));
      }
      b.addBlocks(FileBlockInfoProto.newBuilder().setBlock(info).setOffset(offset));
      offset += f.blockSize();
    }
    return b.build();
  }

  static WorkerAddressProto toProto(WorkerAddress a) {
    return WorkerAddressProto.newBuilder().setHost(a.host()).setRpcPort(a.rpcPort()).build();
  }

  static WorkerAddress fromProto(WorkerAddressProto p) {
    return new WorkerAddress(p.getHost(), p.getRpcPort());
  }

  static WorkerInfoProto toProto(WorkerState w) {
    return WorkerInfoProto.newBuilder().setId(w.id()).setAddress(toProto(w.address()))
        .setCapacityBytes(w.capacityBytes()).setUsedBytes(w.usedBytes())
        .setLastHeartbeatMs(w.lastHeartbeatMs()).setBlockCount(w.blockCount())
        .setStartTimeMs(w.startTimeMs()).build();
  }

  static List<BlockReport> fromProto(List<BlockReportProto> reports) {
    List<BlockReport> out = new ArrayList<>(reports.size());
    for (BlockReportProto r : reports) {
      out.add(new BlockReport(r.getBlockId(), r.getLength(), r.getTier()));
    }
    return out;
  }
}
