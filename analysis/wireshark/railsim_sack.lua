-- railsim_sack.lua - Wireshark/tshark post-dissector for railsim's SACK
-- extension (docs/pcap.md, "Selective NAK"). With
-- transport.recovery=selective, a receiver answers each out-of-order PSN
-- with an RC Acknowledge whose AETH says NAK, PSN sequence error (BTH PSN =
-- the next PSN expected), followed by 4 bytes the IB spec does not define:
-- a reserved byte and the 24-bit PSN that arrived. Wireshark's InfiniBand
-- dissector shows the NAK and leaves those bytes undissected; this script
-- adds them as railsim_sack.psn, e.g.
--   tshark -X lua_script:analysis/wireshark/railsim_sack.lua -r gpu3.nic.pcap \
--          -Y railsim_sack -T fields -e infiniband.bth.psn -e railsim_sack.psn
-- or copy it into ~/.local/lib/wireshark/plugins/ for the GUI.
local sack = Proto("railsim_sack", "railsim SACK extension")
local f_rsv = ProtoField.uint8("railsim_sack.reserved", "Reserved", base.HEX)
local f_psn = ProtoField.uint24("railsim_sack.psn", "Selectively acknowledged PSN", base.DEC)
sack.fields = { f_rsv, f_psn }

local bth_opcode = Field.new("infiniband.bth.opcode")
local aeth_syndrome = Field.new("infiniband.aeth.syndrome")
local udp_length = Field.new("udp.length")

local RC_ACK = 0x11
local NAK_PSN_SEQ_ERR = 0x60
-- UDP header 8, BTH 12, AETH 4, extension 4, ICRC 4
local SACK_UDP_LEN = 8 + 12 + 4 + 4 + 4

function sack.dissector(tvb, pinfo, tree)
    local op, syn, ulen = bth_opcode(), aeth_syndrome(), udp_length()
    if not op or not syn or not ulen then return end
    if op.value ~= RC_ACK or syn.value ~= NAK_PSN_SEQ_ERR or ulen.value ~= SACK_UDP_LEN then return end
    local off = syn.offset + 4 -- the extension follows the 4-byte AETH
    local t = tree:add(sack, tvb(off, 4))
    t:add(f_rsv, tvb(off, 1))
    t:add(f_psn, tvb(off + 1, 3))
    pinfo.cols.info:append(" SACK PSN=" .. tvb(off + 1, 3):uint())
end

register_postdissector(sack)
